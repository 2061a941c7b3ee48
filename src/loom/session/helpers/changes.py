"""What a thread's session changed in the project since its starting commit (the web
Changes tab, REPL `/diff`): `loom.gitdiff` on the thread's recorded commit, which is
checked there, kept to the files the session changed. The person's own edits elsewhere
and the untracked files that were there already are not the session's changes."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from loom.gitdiff import Changes, FileDiff, changes_since

__all__ = [
    "Changes",
    "FileDiff",
    "changed_by",
    "changes_since",
    "changes_since_start",
    "texts_before_edits",
]


def changes_since_start(project_root: Path | str, thread: Any, max_untracked: int = 200) -> Changes:
    """Per-file diffs of the working tree against `thread.git_initial_commit_sha`, for
    the files the thread's session changed (`changed_by`)."""
    base = getattr(thread, "git_initial_commit_sha", None)
    root = Path(project_root)
    only = changed_by(root, thread)
    return changes_since(root, base, max_untracked=max_untracked, only=only)


def changed_by(project_root: Path, thread: Any) -> set[str]:
    """The project-relative paths the thread's session changed: what its checkpoints saw
    change within each turn that ran tools (shell commands' work too), and the files its
    editing calls named (a turn still running has no end checkpoint yet)."""
    from loom.session.runtime.checkpointing import records

    paths = {path for _call_id, path in _edits(thread)}
    starts: dict[Any, str] = {}
    ends: dict[Any, str] = {}
    for record in records(thread):
        turn, commit = record.get("turn_id"), record.get("commit")
        if record.get("kind") == "before_tool" and isinstance(commit, str):
            starts.setdefault(turn, commit)
        elif record.get("kind") == "turn_end" and isinstance(commit, str):
            ends[turn] = commit
    turns = [(start, ends[turn]) for turn, start in starts.items() if turn in ends]
    if turns:
        from loom.checkpoints import CheckpointStore
        from loom.paths import LoomPaths

        store = CheckpointStore.for_project(project_root, LoomPaths.from_env().data)
        for start, end in turns:
            with contextlib.suppress(Exception):  # a checkpoint gc removed: the rest stands
                paths.update(store.changed_paths(start, end))
    return paths


def texts_before_edits(
    project_root: Path | str | None, thread: Any, max_bytes: int, most: int = 50
) -> dict[str, str]:
    """Call id -> the text of the file an editing call changed, as its checkpoint kept it
    just before the call ran (the newest `most` such calls; a file that was not there, was
    binary or bigger than `max_bytes`: none). A saved edit's diff is shown with its
    context from these, as the live card showed it."""
    from loom.session.runtime.checkpointing import records

    commits: dict[str, str] = {
        str(r.get("call_id")): str(r.get("commit"))
        for r in records(thread)
        if r.get("kind") == "before_tool" and isinstance(r.get("commit"), str)
    }
    wanted = [
        (call_id, commits[call_id], path) for call_id, path in _edits(thread) if call_id in commits
    ]
    if not wanted or not project_root:
        return {}
    from loom.checkpoints import CheckpointStore
    from loom.paths import LoomPaths

    store = CheckpointStore.for_project(Path(project_root), LoomPaths.from_env().data)
    found: dict[str, str] = {}
    for call_id, commit, path in wanted[-most:]:
        with contextlib.suppress(Exception):  # gone (gc), unreadable: the arguments' diff
            data = store.read(commit, path, max_bytes)
            if data is not None and b"\0" not in data[:8192]:
                found[call_id] = data.decode("utf-8", "replace")
    return found


def _edits(thread: Any) -> list[tuple[str, str]]:
    """(call id, project-relative path) of each editing call in the thread, oldest first."""
    from loom.session.helpers.approval import present_call

    found: list[tuple[str, str]] = []
    for message in getattr(thread, "messages", ()):
        for call in getattr(message, "tool_calls", None) or ():
            shown = present_call(None, call.tool_name, call.arguments_json or {})
            if shown.edits_files and shown.path:
                found.append((call.id, shown.path.removeprefix("./")))
    return found
