"""`/tmp` under bubblewrap: the session's own temp folder (`session_temp.py`), or with
none a fresh tmpfs per command; never the machine's shared `/tmp`. `$TMPDIR`, `$TMP`
and `$TEMP` name it, whatever the person's environment said.

A project (or a Loom folder, or a `[sandbox] writable` one) that lies under the real
`/tmp` is mounted on top, at its own path, so its mount point and the folders leading to
it are made inside the session's folder, which commands may write. A command could
swap one of those for a symlink (`/tmp/a -> /oldroot/home/person`), and the next
command's bubblewrap would follow it while it sets up its mounts, making folders where
the command chose, on the host. So Loom makes them itself, as real folders, before the
first command, and every command binds each one onto itself (from the session's folder):
a mount point cannot be renamed or removed, so no command ever gets to replace one, and
everything in them stays writable and kept for the session.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

SANDBOX_TEMP = Path("/tmp")
TEMP_VARIABLES = ("TMPDIR", "TMP", "TEMP")


def temp_mounts(temp: Path | None, planned: Iterable[Path]) -> list[str]:
    """The bwrap arguments that set up `/tmp`, to come before the other mounts.
    `planned`: the paths the other mounts go on."""
    if temp is None:
        args = ["--tmpfs", str(SANDBOX_TEMP)]
    else:
        args = ["--bind", str(temp), str(SANDBOX_TEMP)]
        pins, ends = mount_points_in_temp(planned)
        for rel in (*pins, *ends):
            reserve(temp, rel, directory=rel in pins or (SANDBOX_TEMP / rel).is_dir())
        for rel in pins:
            args += ["--bind", str(temp / rel), str(SANDBOX_TEMP / rel)]
    for variable in TEMP_VARIABLES:
        args += ["--setenv", variable, str(SANDBOX_TEMP)]
    return args


def mount_points_in_temp(planned: Iterable[Path]) -> tuple[list[Path], list[Path]]:
    """(the folders between `/tmp` and each planned path that lies in the session's
    folder, parents first; those planned paths), relative to `/tmp`. A planned path
    inside another planned one is not in the session's folder: the outer mount holds it."""
    paths = sorted({path for path in planned if SANDBOX_TEMP in path.parents}, key=_depth)
    ends = [p for p in paths if not any(other in p.parents for other in paths)]
    pins: list[Path] = []
    for end in ends:
        for folder in reversed(end.parents):
            if SANDBOX_TEMP in folder.parents and folder.relative_to(SANDBOX_TEMP) not in pins:
                pins.append(folder.relative_to(SANDBOX_TEMP))
    return sorted(pins, key=_depth), [end.relative_to(SANDBOX_TEMP) for end in ends]


def _depth(path: Path) -> int:
    return len(path.parts)


def reserve(temp: Path, rel: Path, *, directory: bool) -> None:
    """Make `temp/rel` (on the host) a real folder (or an empty file, for a file's mount
    point), its parents real folders; never through a symlink."""
    fd = os.open(temp, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for i, name in enumerate(rel.parts):
            last = i == len(rel.parts) - 1
            want_dir = directory or not last
            _make(fd, name, want_dir)
            if not last:
                child = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                os.close(fd)
                fd = child
    finally:
        os.close(fd)


def _make(parent: int, name: str, directory: bool) -> None:
    try:
        info = os.lstat(name, dir_fd=parent)
    except FileNotFoundError:
        info = None
    if info is not None:
        if stat.S_ISDIR(info.st_mode) == directory and not stat.S_ISLNK(info.st_mode):
            return
        os.unlink(name, dir_fd=parent)  # a symlink or the wrong kind (never followed)
    if directory:
        os.mkdir(name, 0o700, dir_fd=parent)
    else:
        os.close(os.open(name, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600, dir_fd=parent))
