"""Running git against the private checkpoint store, never against the person's repo.

Every call goes through Loom's hardened runner (`loom._gitsafe.run_git`: no `GIT_*`
from the environment, `core.fsmonitor=false`, no hooks, no external diff, pager or
editor, whatever the store's own config says) with an environment of its own:
GIT_DIR / GIT_INDEX_FILE point into the store and GIT_WORK_TREE at the project, and no
system or global configuration is read (a global `core.autocrlf`, a filter driver or a
hooks path must not change the bytes we store or run anything). Values that reach git
from a thread file (checkpoint ids) are checked by the store before they get here.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from loom._gitsafe import run_git
from loom.core.errors import LoomError

GIT_TIMEOUT = 120.0


class CheckpointError(LoomError):
    """A checkpoint could not be taken or restored; the message says what and what to do."""


def private_env(git_dir: Path, work_tree: Path, index_file: Path) -> dict[str, str]:
    """The store's repository, for `run_git(repo_env=...)`."""
    return {
        "GIT_DIR": str(git_dir),
        "GIT_WORK_TREE": str(work_tree),
        "GIT_INDEX_FILE": str(index_file),
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "Loom checkpoints",
        "GIT_AUTHOR_EMAIL": "checkpoints@loom.invalid",
        "GIT_COMMITTER_NAME": "Loom checkpoints",
        "GIT_COMMITTER_EMAIL": "checkpoints@loom.invalid",
        "LC_ALL": "C",
    }


class Git:
    """`git ARGS` in the store's environment; output as bytes, failures as CheckpointError."""

    def __init__(self, git_dir: Path, work_tree: Path, index_file: Path) -> None:
        self.git_dir = git_dir
        self.work_tree = work_tree
        self.env = private_env(git_dir, work_tree, index_file)

    def _run(
        self, args: tuple[str, ...], stdin: bytes | None
    ) -> subprocess.CompletedProcess[bytes]:
        # read_only=False: the store's own index and objects are written on purpose
        return run_git(
            self.work_tree, *args, read_only=False, input=stdin, timeout=GIT_TIMEOUT,
            repo_env=self.env,
        )  # fmt: skip

    def run(self, *args: str, stdin: bytes | None = None, check: bool = True) -> bytes:
        try:
            done = self._run(args, stdin)
        except FileNotFoundError as exc:
            raise CheckpointError(
                "checkpoints need the `git` program, which was not found; install git"
            ) from exc
        except subprocess.TimeoutExpired as exc:
            raise CheckpointError(f"git {args[0]} took longer than {GIT_TIMEOUT:g} s") from exc
        if check and done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip() or f"exit {done.returncode}"
            raise CheckpointError(f"git {args[0]} failed in the checkpoint store: {message}")
        return done.stdout

    def ok(self, *args: str) -> bool:
        """Whether `git ARGS` succeeds (for questions such as "does this object exist")."""
        try:
            return self._run(args, None).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            return False

    def text(self, *args: str, stdin: bytes | None = None) -> str:
        return self.run(*args, stdin=stdin).decode("utf-8", "surrogateescape").strip()
