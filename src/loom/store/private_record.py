"""Loom's own record of which threads are private: `data/private-threads.txt`.

A thread file says `is_private`, but a thread file is data someone else may have
written: a command the agent ran could flip the flag and queue the thread in
`pending.json` (both live where such a command once could write). So every time Loom
saves a private thread it also records the id here (the data folder, which sandboxed
commands cannot write), and the record wins over the file: a recorded thread loads as
private, saves as private and is never uploaded (`loom.store.syncing` asks the record
before every push, and refuses to push anything while the record cannot be read).

Loom offers no way to make a private thread shared again (`loom share` refuses), so
ids are only ever added. The file is append-only, one id per line: two processes
adding at once cannot lose each other's id, and a line torn by a crash costs no other.
"""

from __future__ import annotations

import os
from pathlib import Path

from loom.core.ids import is_thread_id


class PrivateRecordUnreadable(OSError):
    """The record exists but cannot be read: nothing may be uploaded until it can."""


class PrivateRecord:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._ids: frozenset[str] = frozenset()
        self._read_as: tuple[int, int, int] | None = None  # inode, size, mtime of _ids

    def ids(self) -> frozenset[str]:
        """The recorded ids (read again whenever the file changed)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return frozenset()
        except OSError as exc:
            raise self._unreadable(exc) from exc
        seen = (st.st_ino, st.st_size, st.st_mtime_ns)
        if seen != self._read_as:
            try:
                text = self.path.read_bytes().decode("utf-8", "replace")
            except OSError as exc:
                raise self._unreadable(exc) from exc
            lines = (line.strip() for line in text.splitlines())
            self._ids = frozenset(line for line in lines if is_thread_id(line))
            self._read_as = seen
        return self._ids

    def holds(self, thread_id: str) -> bool:
        """True when `thread_id` was recorded private (PrivateRecordUnreadable if the
        record cannot be read)."""
        return thread_id in self.ids()

    def add(self, thread_id: str) -> None:
        """Record `thread_id` as private, durably (OSError when it cannot be written)."""
        if not is_thread_id(thread_id):
            raise ValueError(f"{thread_id!r} is not a thread id")
        try:
            if self.holds(thread_id):
                return
        except PrivateRecordUnreadable:
            pass  # append anyway: the id must not be lost because of damage elsewhere
        self.path.parent.mkdir(parents=True, exist_ok=True)
        created = not self.path.exists()
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            size = os.fstat(fd).st_size
            torn = size > 0 and os.pread(fd, 1, size - 1) != b"\n"  # a crash cut a line
            os.write(fd, (("\n" if torn else "") + thread_id + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        if created:
            from loom.store.atomic import fsync_dir

            fsync_dir(self.path.parent)

    def _unreadable(self, exc: OSError) -> PrivateRecordUnreadable:
        return PrivateRecordUnreadable(
            exc.errno or 0,
            f"Loom's record of private threads ({self.path}) cannot be read: "
            f"{exc.strerror or exc}; nothing is uploaded until it can be",
        )
