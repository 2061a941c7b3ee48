"""Small look-ups the faces need before or beside a session: the threads of a project,
newest first (`loom -c`, the `loom resume` picker), and the model names to complete."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from loom.paths import LoomPaths


@dataclass(frozen=True)
class ThreadSummary:
    id: str
    title: str
    last_activity_at: str
    git_branch: str | None
    message_count: int
    workspace_root: str | None
    first_words: str  # the start of the first message


def recent_threads(
    project_root: Path | None = None, limit: int = 200, paths: LoomPaths | None = None
) -> list[ThreadSummary]:
    """Threads newest first, from the search index (refreshed from the thread files);
    only those started in `project_root` when it is given."""
    from loom.store.index import THREADS
    from loom.store.index_sync import open_index, refresh

    paths = paths or LoomPaths.from_env()
    index, _note = open_index(paths)
    index, _report, _fallback = refresh(index, paths)
    where, args = "", []
    if project_root is not None:
        where, args = "WHERE workspace_root = ?", [str(Path(project_root).resolve())]
    rows = index.conn.execute(
        "SELECT id, title, last_activity_at, git_branch, message_count, workspace_root, num "
        f"FROM {THREADS} {where} ORDER BY last_activity_at DESC, id DESC LIMIT ?",
        (*args, limit),
    ).fetchall()
    return [
        ThreadSummary(row[0], row[1], row[2], row[3], row[4], row[5], _first_words(index, row[6]))
        for row in rows
    ]


def newest_thread_in(project_root: Path, paths: LoomPaths | None = None) -> str | None:
    found = recent_threads(project_root, limit=1, paths=paths)
    return found[0].id if found else None


def _first_words(index: object, num: int, length: int = 80) -> str:
    from loom.store.index import MESSAGES

    try:
        row = index.conn.execute(  # type: ignore[attr-defined]
            f"SELECT substr(body, 1, ?) FROM {MESSAGES} WHERE rowid = ?",
            (length * 2, (num << 20) | 1),  # the first message (see loom.store.index)
        ).fetchone()
    except sqlite3.Error:
        return ""
    return " ".join((row[0] if row else "").split())[:length]


def model_names() -> list[str]:
    """`provider:model-id` for every catalogued model (Tab completion of /model)."""
    from loom.llm.catalog import known_models

    return sorted(f"{info.provider}:{info.model_id}" for info in known_models())
