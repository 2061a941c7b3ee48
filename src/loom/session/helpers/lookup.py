"""Small look-ups the faces need before or beside a session: the threads of a project,
newest first (`loom -c`, the `loom resume` picker), and the model names to complete."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from loom.paths import LoomPaths


@dataclass(frozen=True)
class RecentThread:
    """A thread as the `loom resume` picker and `loom -c` see it."""

    id: str
    title: str
    last_activity_at: str
    git_branch: str | None
    message_count: int
    workspace_root: str | None
    first_words: str  # the start of the first message


def recent_threads(
    project_root: Path | None = None, limit: int = 200, paths: LoomPaths | None = None
) -> list[RecentThread]:
    """Threads newest first, from the search index (refreshed from the thread files);
    only those started in `project_root` when it is given."""
    from loom.store.index_messages import recent_with_first_words
    from loom.store.index_sync import open_index, refresh

    paths = paths or LoomPaths.from_env()
    index, _note = open_index(paths)
    index, _report, _fallback = refresh(index, paths)
    root = str(Path(project_root).resolve()) if project_root is not None else None
    return [
        RecentThread(
            row["id"],
            row["title"],
            row["last_activity_at"],
            row["git_branch"],
            row["message_count"],
            row["workspace_root"],
            row["first_words"],
        )
        for row in recent_with_first_words(index, paths, root, limit)
    ]


def newest_thread_in(project_root: Path, paths: LoomPaths | None = None) -> str | None:
    found = recent_threads(project_root, limit=1, paths=paths)
    return found[0].id if found else None


def model_names() -> list[str]:
    """`provider:model-id` for every catalogued model (Tab completion of /model)."""
    from loom.llm.catalog import known_models

    return sorted(f"{info.provider}:{info.model_id}" for info in known_models())
