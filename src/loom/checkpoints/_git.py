"""Running git against the private checkpoint store, never against the person's repo.

Every call gets an environment of its own: the person's GIT_* variables are dropped,
GIT_DIR / GIT_INDEX_FILE point into the store and GIT_WORK_TREE at the project, and no
system or global configuration is read (a global `core.autocrlf`, a filter driver or a
hooks path must not change the bytes we store or run anything).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from loom.core.errors import LoomError

GIT_TIMEOUT = 120.0


class CheckpointError(LoomError):
    """A checkpoint could not be taken or restored; the message says what and what to do."""


def private_env(git_dir: Path, work_tree: Path, index_file: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(
        GIT_DIR=str(git_dir),
        GIT_WORK_TREE=str(work_tree),
        GIT_INDEX_FILE=str(index_file),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_TERMINAL_PROMPT="0",
        GIT_AUTHOR_NAME="Loom checkpoints",
        GIT_AUTHOR_EMAIL="checkpoints@loom.invalid",
        GIT_COMMITTER_NAME="Loom checkpoints",
        GIT_COMMITTER_EMAIL="checkpoints@loom.invalid",
        LC_ALL="C",
    )
    return env


class Git:
    """`git ARGS` in the store's environment; output as bytes, failures as CheckpointError."""

    def __init__(self, git_dir: Path, work_tree: Path, index_file: Path) -> None:
        self.git_dir = git_dir
        self.work_tree = work_tree
        self.env = private_env(git_dir, work_tree, index_file)

    def run(self, *args: str, stdin: bytes | None = None, check: bool = True) -> bytes:
        try:
            done = subprocess.run(
                ["git", *args],
                input=stdin,
                capture_output=True,
                env=self.env,
                cwd=self.work_tree,
                timeout=GIT_TIMEOUT,
                check=False,
            )
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
            done = subprocess.run(
                ["git", *args],
                capture_output=True,
                env=self.env,
                cwd=self.work_tree,
                timeout=GIT_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return False
        return done.returncode == 0

    def text(self, *args: str, stdin: bytes | None = None) -> str:
        return self.run(*args, stdin=stdin).decode("utf-8", "surrogateescape").strip()
