"""`ws.worktrees`: the project's Loom worktrees (loom.worktrees), for the faces.

    wt, created = ws.worktrees.ensure("fix-login")   # LoomError: not git, bad name, taken
    ws.worktrees.list(); ws.worktrees.remove("fix-login", force=False)
    ws.worktrees.diff("fix-login"); ws.worktrees.merge("fix-login")   # its work, back home

`Workspace.open(cwd, worktree="fix-login")` opens the workspace *in* the worktree: its
sessions work there and their threads record it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loom.paths import LoomPaths
    from loom.worktrees import Worktree


class WorktreesApi:
    def __init__(self, paths: LoomPaths, project_root: Path) -> None:
        self.paths = paths
        self.project_root = project_root

    @classmethod
    def for_folder(cls, cwd: Path) -> WorktreesApi:
        """For the project around `cwd`, before any workspace is open."""
        from loom.paths import LoomPaths

        return cls(LoomPaths.from_env(), cwd)

    def ensure(self, name: str) -> tuple[Worktree, bool]:
        """The worktree NAME (made on branch loom/NAME from the current commit, or the
        existing one) and whether it was made now."""
        from loom.worktrees import ensure

        return ensure(self.project_root, name, self.paths.data)

    def list(self) -> list[Worktree]:
        from loom.worktrees import list_worktrees

        return list_worktrees(self.project_root, self.paths.data)

    def remove(self, name: str, *, force: bool = False, delete_branch: bool = False) -> Worktree:
        from loom.worktrees import remove

        return remove(self.project_root, name, self.paths.data, force=force,
                      delete_branch=delete_branch)  # fmt: skip

    def commit(self, worktree: Worktree, message: str) -> str | None:
        """Commit the worktree's uncommitted work on its branch: the commit, or None
        when there was nothing to commit."""
        from loom.worktrees import commit_work

        return commit_work(worktree, message)

    def diff(self, name: str) -> str:
        """The worktree NAME's changes since it left the project's commit (a patch)."""
        from loom.worktrees import diff, find

        return diff(find(self.project_root, name, self.paths.data))

    def merge(self, name: str) -> tuple[Worktree, str | None, str]:
        """Commit what is left in worktree NAME, then merge its branch into the project's
        checked-out branch: (the worktree, the commit made first or None, git's line)."""
        from loom.worktrees import find, merge

        worktree = find(self.project_root, name, self.paths.data)
        made, said = merge(worktree)
        return worktree, made, said
