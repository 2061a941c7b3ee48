"""Crash-safe file replacement: temp file, fsync, rename, fsync the directory.

After `atomic_write_bytes` returns, the new content is durable; if the process dies at
any point before, the old file is untouched. Temp files are named `.<name>.<pid>.tmp`
(hidden, never matching `T-*.json`) so a reader listing threads never sees one.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Sequence
from pathlib import Path

_IOV_CHUNK = 512  # stay well under IOV_MAX (1024 on Linux)


class StorageError(OSError):
    """A write that could not be made durable; the previous file is intact."""


def temp_path_for(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace `path` with `data` atomically (and durably unless `durable=False`)."""
    atomic_write_parts(path, [data], durable=durable)


def atomic_write_parts(path: Path, parts: Sequence[bytes], *, durable: bool = True) -> None:
    """Like atomic_write_bytes for the concatenation of `parts`, written with writev
    so a big file assembled from cached pieces is never copied into one buffer."""
    move_into_place(write_temp(path, parts, durable=durable), path, durable=durable)


def write_temp(
    path: Path, parts: Sequence[bytes], *, durable: bool = True, temp_dir: Path | None = None
) -> Path:
    """Step 1 of an atomic write: the new content in a temp file next to `path` (or in
    `temp_dir`, which must be on the same filesystem)."""
    tmp = temp_path_for(path) if temp_dir is None else temp_dir / temp_path_for(path).name
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    except OSError as exc:
        raise _explain(exc, path) from exc
    try:
        try:
            # Held while writing, so a cleaner (store/tempfiles.py) leaves it alone.
            fcntl.flock(fd, fcntl.LOCK_EX)
            _write_all(fd, parts)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        _remove_quietly(tmp)
        raise _explain(exc, path) from exc
    return tmp


def move_into_place(tmp: Path, path: Path, *, durable: bool = True) -> None:
    """Step 2: rename the temp file over `path` (atomic), then fsync the folder."""
    try:
        try:
            os.replace(tmp, path)
        except OSError as exc:
            if exc.errno != errno.EXDEV or tmp.parent == path.parent:
                raise
            # The temp folder is on another filesystem: stage a copy next to `path`.
            staged = write_temp(path, [tmp.read_bytes()], durable=durable)
            _remove_quietly(tmp)
            tmp = staged
            os.replace(tmp, path)
    except StorageError:
        _remove_quietly(tmp)
        raise
    except OSError as exc:
        _remove_quietly(tmp)
        raise _explain(exc, path) from exc
    if durable:
        fsync_dir(path.parent)


def _write_all(fd: int, parts: Sequence[bytes]) -> None:
    for start in range(0, len(parts), _IOV_CHUNK):
        chunk = [p for p in parts[start : start + _IOV_CHUNK] if p]
        if not chunk:
            continue
        written = os.writev(fd, chunk) if len(chunk) > 1 else os.write(fd, chunk[0])
        if written == sum(map(len, chunk)):
            continue  # the usual case: no walk over the pieces in Python
        for part in chunk:  # after a short write, finish the rest piece by piece
            if written >= len(part):
                written -= len(part)
                continue
            view = memoryview(part)[written:]
            written = 0
            while view:
                view = view[os.write(fd, view) :]


def _remove_quietly(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _explain(exc: OSError, path: Path) -> StorageError:
    if exc.errno == errno.ENOSPC:
        why = "the disk is full; free some space and try again"
    elif exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        why = f"the folder {path.parent} is not writable; check its permissions"
    else:
        why = exc.strerror or str(exc)
    message = f"could not save {path.name}: {why} (the previous copy is intact)"
    return StorageError(exc.errno or 0, message)
