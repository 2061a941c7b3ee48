"""Real git repositories in temp folders, and what the tests compare in them."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

from tests.support.files import write

# Every commit gets this author, so commits work on a machine with no git identity.
IDENTITY = ("-c", "user.name=Loom Test", "-c", "user.email=test@loom.invalid")


def git(root: Path, *args: str) -> str:
    """`git ARGS` in `root` (with a commit identity); its stdout. Fails on a non-zero exit."""
    return subprocess.run(
        ["git", *IDENTITY, *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


def init_repo(
    root: Path,
    files: Mapping[str, str | bytes] | None = None,
    *,
    commit: str | None = None,
    branch: str | None = None,
) -> Path:
    """A git repository at `root` (made if missing) holding `files`; with `commit`, they
    are added and committed with that message. Returns root."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", *(("-b", branch) if branch else ()))
    for relative, content in (files or {}).items():
        write(root, relative, content)
    if commit is not None:
        git(root, "add", "-A")
        git(root, "commit", "-qm", commit)
    return root


def repo_state(root: Path) -> dict[str, str]:
    """What must not change in the person's repo: objects, refs, stash, index."""
    return {
        "objects": git(root, "count-objects", "-v"),
        "refs": git(root, "for-each-ref"),
        "stash": git(root, "stash", "list"),
        "index": (root / ".git" / "index").read_bytes().hex(),
    }


def tree_state(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under root (but .git) with its bytes and mode."""
    found = {}
    for path in sorted(root.rglob("*")):
        if ".git" in path.relative_to(root).parts or not path.is_file():
            continue
        found[path.relative_to(root).as_posix()] = (path.read_bytes(), path.stat().st_mode)
    return found


def git_visible(root: Path) -> set[str]:
    """The files git would list: tracked, or untracked and not ignored."""
    return set(git(root, "ls-files", "--cached", "--others", "--exclude-standard").splitlines())


def make_repo(root: Path) -> Path:
    """A repository on branch main with one commit of a.txt (its own author: Tester)."""
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "Tester")
    (root / "a.txt").write_text("one\n")
    git(root, "add", "a.txt")
    git(root, "commit", "-qm", "first")
    return root
