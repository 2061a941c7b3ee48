"""Reading a project's own text files (config, commands, rules, agents, skills) the way
the file tools read: confined to the project.

A cloned repository can hold `.loom/commands/review.md -> ~/.ssh/id_rsa`; following that
link would send the key to the model. Every project text file Loom reads for itself goes
through `read_project_text`: symlinks that stay inside the project are followed, one
leading outside (or a folder on the way swapped for one) is refused with
`OutsideProject`, and a FIFO or device is never opened for a blocking read.

    try:
        text = read_project_text(root, ".loom/commands/review.md")
    except OutsideProject as exc:
        warn(str(exc))          # "... leads outside the project (symlink); not read"
    if text is None: ...        # no such file

`what_program_runs(root, rel)` says, for a trust fingerprint, what a program the project
holds (`.venv/bin/python`) would run, reading it the same careful way.

Only the standard library, `_beneath` and `core.errors`, so config and every layer above can
use it.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from loom import _beneath
from loom.core.errors import LoomError

DEFAULT_MAX_BYTES = 1_000_000
HASHED_AT_MOST = 64 * 1024 * 1024  # a program larger is named by its size


class OutsideProject(LoomError, OSError):
    """The project file is a symlink (or sits behind one) leading outside the project,
    or is not a regular file: Loom does not read it."""


def project_relative(root: Path | str, path: Path | str) -> str:
    """`path` (absolute, or relative to `root`) as a path relative to the project root;
    OutsideProject when it is not below the root at all (before following links)."""
    root_text = os.path.abspath(os.fspath(root))
    full = os.path.abspath(os.path.join(root_text, os.fspath(path)))
    if not _beneath.inside(full, root_text):
        # the root may itself be reached through a symlink (/tmp -> /private/tmp)
        real_root = os.path.realpath(root_text)
        if not _beneath.inside(full, real_root):
            raise OutsideProject(f"{path} is not inside the project {root}")
        root_text = real_root
    return os.path.relpath(full, root_text) if full != root_text else ""


def read_project_text(
    root: Path | str, path: Path | str, *, max_bytes: int = DEFAULT_MAX_BYTES
) -> str | None:
    """The text (UTF-8, undecodable bytes replaced) of the project file `path`, at most
    `max_bytes` bytes of it; None when there is no such file. OutsideProject when it
    leads outside `root` or is not a regular file (a folder, FIFO, device)."""
    data = read_project_bytes(root, path, max_bytes=max_bytes)
    return None if data is None else data.decode("utf-8", errors="replace")


def read_project_bytes(
    root: Path | str, path: Path | str, *, max_bytes: int = DEFAULT_MAX_BYTES
) -> bytes | None:
    """As `read_project_text`, the raw bytes."""
    rel = project_relative(root, path)
    shown = os.path.join(os.fspath(root), rel)
    try:
        fd = _beneath.open_following_inside(os.fspath(root), rel)
    except _beneath.Escape:
        raise OutsideProject(
            f"{shown} leads outside the project (a symlink); not read. Replace the link "
            "with the file itself if you meant it"
        ) from None
    except (FileNotFoundError, NotADirectoryError):
        return None
    except IsADirectoryError:
        raise OutsideProject(f"{shown} is a folder, not a file; not read") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OutsideProject(f"{shown} is not a regular file; not read")
        chunks: list[bytes] = []
        left = max_bytes
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def project_text_files(root: Path | str, folder: str, suffix: str) -> list[str]:
    """Names of the files ending in `suffix` directly in the project folder `folder`
    (relative to `root`), sorted; [] when it is missing or leads outside the project.
    Read each with `read_project_text(root, f"{folder}/{name}")`."""
    try:
        real = _beneath.resolve_beneath(os.fspath(root), project_relative(root, folder))
        if real is None:  # the folder leads outside the project
            return []
        fd = _beneath.open_dir(os.fspath(root), real)
    except (OSError, ValueError):
        return []
    try:
        names = os.listdir(fd)
    except OSError:
        return []
    finally:
        os.close(fd)
    return sorted(name for name in names if name.endswith(suffix) and len(name) > len(suffix))


def not_a_project(root: Path | str) -> str | None:
    """Why `root` is not a project folder, or None when it may be one. The file system
    root, the person's home folder and any folder holding it are not projects: as one,
    every file of the person's would be the agent's to write."""
    real = Path(os.path.realpath(os.fspath(root)))
    home = Path(os.path.realpath(os.path.expanduser("~")))
    if real == Path(real.anchor):
        return f"{real} is the root of the file system, not a project folder"
    if real == home:
        return f"{real} is your home folder, not a project folder"
    if real in home.parents:
        return f"{real} holds your home folder ({home}), so it is not a project folder"
    return None


def what_program_runs(root: Path, rel: str) -> str:
    """What running `root/rel` runs, for a trust fingerprint: where its link leads when
    that is outside the project, else the program with its hash (one kept in the
    project can be swapped by a command). A FIFO or device is named, never read."""
    real = Path(os.path.realpath(root / rel))
    inside = real.is_relative_to(Path(os.path.realpath(root)))
    try:  # a device is never opened; a FIFO swapped in after the check cannot stall it
        if not stat.S_ISREG(real.stat().st_mode):
            return f"{real} (not a file)"
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        return f"{real} ({exc.strerror or 'missing'})"
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return f"{real} (not a file)"  # a FIFO or a device is never read
        if not inside:
            return str(real)  # where the project's link leads: that is what it chose
        if info.st_size > HASHED_AT_MOST:
            return f"{real} ({info.st_size} bytes)"
        digest = hashlib.sha256()
        try:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
        except OSError as exc:
            return f"{real} (unreadable: {exc.strerror or exc})"
    return f"{real} (a program in the project, sha256 {digest.hexdigest()[:16]})"
