"""The per-thread writer lock: one process at a time may write a thread.

A lock is `data/locks/<thread id>.lock`, held with `flock(LOCK_EX)` for the whole
session and naming its holder (pid, host, since). The kernel drops an flock when its
process dies, so a lock left by a crashed or killed process is recovered without any
guessing; the file's content only serves to name the holder in the error.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import socket
from pathlib import Path
from types import TracebackType

from loom.store.base import ThreadLocked


class WriterLock:
    """A held writer lock; release it with `release()` or by leaving a `with` block."""

    def __init__(self, thread_id: str, path: Path, fd: int) -> None:
        self.thread_id = thread_id
        self.path = path
        self._fd: int | None = fd

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is None:
            return
        # Unlink while still holding the lock; a waiter that opened the old file notices
        # (its fd no longer matches the path) and retries on a fresh one.
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> WriterLock:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()

    def __del__(self) -> None:  # a forgotten lock must not outlive its owner object
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)


def acquire_writer_lock(locks_dir: Path, thread_id: str) -> WriterLock:
    """Take the writer lock of `thread_id` or raise ThreadLocked naming the holder."""
    locks_dir.mkdir(parents=True, exist_ok=True)
    path = locks_dir / f"{thread_id}.lock"
    for _ in range(20):
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
            raise ThreadLocked(thread_id, describe_holder(path)) from None
        if not _same_file(fd, path):  # the previous holder unlinked it meanwhile
            os.close(fd)
            continue
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps(_me()).encode())
        return WriterLock(thread_id, path, fd)
    raise ThreadLocked(thread_id, describe_holder(path))


def lock_holder(locks_dir: Path, thread_id: str) -> str | None:
    """Who holds the writer lock of `thread_id` right now, or None if nobody does."""
    path = locks_dir / f"{thread_id}.lock"
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return describe_holder(path)
    finally:
        os.close(fd)
    return None


def describe_holder(path: Path) -> str:
    try:
        info = json.loads(path.read_text())
        return f"pid {info['pid']} on {info['host']} (since {info['since']})"
    except (OSError, ValueError, KeyError, TypeError):
        return "another process"


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists on this machine."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _same_file(fd: int, path: Path) -> bool:
    try:
        on_disk = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (mine.st_dev, mine.st_ino) == (on_disk.st_dev, on_disk.st_ino)


def _me() -> dict[str, object]:
    from loom.core.clock import now_iso

    return {"pid": os.getpid(), "host": socket.gethostname(), "since": now_iso()}
