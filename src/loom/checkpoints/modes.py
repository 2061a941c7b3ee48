"""Exact file modes for checkpoints: git keeps only 644 or 755.

A restored file is written by git with 0666 or 0777 less the umask, so a 600 secret
came back world-readable and a 640 config 644. Each checkpoint therefore records the
permission bits of the files whose mode is not git's own (644, or 755 with the owner's
execute bit), in a line of its commit message, and a restore puts them back. Files with
git's modes are set to exactly that (whatever the umask).

Which files are looked at: every file of the store's index on a store's first snapshot,
then the files the snapshot found changed plus the ones recorded before (a chmod that
changes neither content nor the execute bit is seen once the file changes).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

TRAILER = "loom-modes: "


def git_default(perm: int) -> int:
    return 0o755 if perm & stat.S_IXUSR else 0o644


def special_modes(root: Path, paths: Iterable[str]) -> dict[str, int]:
    """The permission bits of the regular files in `paths` that git would not restore."""
    found: dict[str, int] = {}
    for path in paths:
        try:
            info = os.lstat(root / path)
        except OSError:
            continue  # gone
        if stat.S_ISREG(info.st_mode):
            perm = stat.S_IMODE(info.st_mode)
            if perm != git_default(perm):
                found[path] = perm
    return found


def trailer(modes: Mapping[str, int]) -> str:
    """The commit message's line for `modes` ("" when every file has git's mode)."""
    if not modes:
        return ""
    return "\n\n" + TRAILER + json.dumps({p: oct(m)[2:] for p, m in sorted(modes.items())})


def parse(commit: bytes) -> dict[str, int]:
    """The modes recorded in a commit object's text (`git cat-file commit`)."""
    for line in reversed(commit.decode("utf-8", "surrogateescape").splitlines()):
        if line.startswith(TRAILER):
            try:
                raw = json.loads(line[len(TRAILER) :])
                return {str(p): int(m, 8) & 0o7777 for p, m in raw.items()}
            except (ValueError, TypeError, AttributeError):
                return {}  # a damaged record: git's modes are the fallback
    return {}


def apply(root: Path, paths: Iterable[str], modes: Mapping[str, int]) -> None:
    """Give each restored regular file in `paths` its recorded mode, else git's."""
    for path in paths:
        target = root / path
        try:
            info = os.lstat(target)
            if not stat.S_ISREG(info.st_mode):
                continue  # a symlink or a folder: git's own handling stands
            perm = stat.S_IMODE(info.st_mode)
            wanted = modes.get(path, git_default(perm))
            if perm != wanted:  # (no agent runs during a restore to swap it for a link)
                os.chmod(target, wanted)
        except OSError:
            continue  # gone meanwhile: the bytes are what matters
