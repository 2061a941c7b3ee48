"""What changed in the project since a thread's starting commit (the web Changes tab,
REPL `/diff`): `loom.gitdiff` on the thread's recorded commit, which is checked there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loom.gitdiff import Changes, FileDiff, changes_since

__all__ = ["Changes", "FileDiff", "changes_since", "changes_since_start"]


def changes_since_start(project_root: Path | str, thread: Any, max_untracked: int = 200) -> Changes:
    """Per-file diffs of the working tree against `thread.git_initial_commit_sha`."""
    base = getattr(thread, "git_initial_commit_sha", None)
    return changes_since(Path(project_root), base, max_untracked=max_untracked)
