"""The git folders a sandboxed command must not write: the repository's `.git` around
the project, wherever it is (the project may be a subfolder of the repository), and for
a `.git` file (a worktree or a submodule) the file itself, the git folder it names and
that folder's common folder (`commondir`, where config and hooks live).

Why the whole `.git` and not only config and hooks: git follows indirections inside it
(`commondir`, `gitdir`, `objects/info/alternates`, `config.worktree`, `info/`), and a
folder that is not itself a mount point can be renamed and recreated. A read-only bind
of the whole `.git` is a mount point: it cannot be renamed or replaced and nothing in it
can be written. The agent commits through the `git` tool, which Loom runs outside the
sandbox with its hardened runner (`loom._gitsafe`) and its allowlist.

Values read from these files are paths only: they are resolved and checked to exist,
never passed to a program.
"""

from __future__ import annotations

import os
from pathlib import Path

MAX_POINTER_BYTES = 4096  # a `.git` file or `commondir` is one short line


def git_dirs(project_root: Path) -> list[Path]:
    """The existing git paths to keep read-only for commands run in `project_root`
    (resolved, the nearest repository only, empty outside a repository)."""
    for folder in (project_root, *project_root.parents):
        dot_git = folder / ".git"
        if os.path.isdir(dot_git) and not os.path.islink(dot_git):
            return _with_common(_real(dot_git), [_real(dot_git)])
        if os.path.lexists(dot_git):
            found = [_real(dot_git)]
            target = _pointer(dot_git, "gitdir:")
            if target is not None:
                found = _with_common(target, [*found, target])
            return found
    return []


def _with_common(git_dir: Path, found: list[Path]) -> list[Path]:
    common = _pointer(git_dir / "commondir", "")
    if common is not None and common not in found:
        found.append(common)
    return found


def _pointer(file: Path, prefix: str) -> Path | None:
    """The folder a pointer file names (relative to the file's folder), when it is one."""
    try:
        with open(file, "rb") as handle:
            raw = handle.read(MAX_POINTER_BYTES)
        text = raw.decode("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith(prefix) or "\n" in text:
        return None
    value = text[len(prefix) :].strip()
    if not value:
        return None
    target = _real(file.parent / value)
    return target if target.is_dir() else None


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))
