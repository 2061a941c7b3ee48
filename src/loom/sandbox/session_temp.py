"""A private temp folder for one session's sandboxed commands.

The machine's `/tmp` is shared by every project and person: a command that could write
there could plant files in another project's folder under `/tmp` (or its virtualenv).
So each session gets its own folder, `loom-tmp-XXXXXXXX` under the system temp folder
(mode 0700: outside the project and Loom's own folders), which the sandbox binds at
`/tmp` and names in `$TMPDIR`; the shared `/tmp` stays read-only (and out of view).
All the session's commands (and its sub-agents', which share its sandbox) share it.

It goes when the session ends (`close`), at the process's exit (atexit, for a run cut
short by a signal), and otherwise at the next Loom's start: each live folder holds an
advisory lock (`flock`) for as long as its Loom process runs, so a folder whose lock
can be taken belongs to a Loom that is gone (`sweep_stale`).
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import shutil
import stat
import tempfile
import threading
import time
from pathlib import Path

PREFIX = "loom-tmp-"
SWEEP_YOUNGER_THAN_S = 60.0  # never sweep a folder this fresh: its Loom may be locking it

_live: set[SessionTemp] = set()
_live_lock = threading.Lock()
_sweeper: list[threading.Thread] = []  # the one sweep of this process, once started
JOIN_SWEEP_AT_EXIT_S = 5.0


class SessionTemp:
    """One session's temp folder, made (and locked) on construction."""

    def __init__(self, parent: Path | None = None) -> None:
        base = parent or system_temp()
        self.path = Path(tempfile.mkdtemp(prefix=PREFIX, dir=base)).resolve()
        os.chmod(self.path, 0o700)  # mkdtemp's mode, kept whatever the umask
        self._fd: int | None = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with _live_lock:
            _live.add(self)
        sweep_soon(base)

    @property
    def closed(self) -> bool:
        return self._fd is None

    def close(self) -> None:
        """Remove the folder and everything in it (idempotent)."""
        with _live_lock:
            _live.discard(self)
            fd, self._fd = self._fd, None
        if fd is None:
            return
        remove_tree(self.path)
        os.close(fd)


def system_temp() -> Path:
    """The system temp folder; a TMPDIR that is `/`, the home folder or one of its
    parents would spread session folders far and wide, so /tmp is used instead."""
    temp = Path(os.path.realpath(tempfile.gettempdir()))
    home = Path(os.path.realpath(Path.home()))
    if temp == home or temp in home.parents:
        return Path(os.path.realpath("/tmp"))
    return temp


def remove_tree(path: Path) -> None:
    """rmtree that also removes what a command made unwritable (`chmod 000 dir`).
    Symlinks inside are removed, never followed."""

    retried: set[str] = set()

    def unlock(_func: object, failed: str, _exc: object) -> None:
        if failed in retried:  # made writable once already: leave it
            return
        retried.add(failed)
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(failed), stat.S_IRWXU)
            if os.path.isdir(failed) and not os.path.islink(failed):
                os.chmod(failed, stat.S_IRWXU)
                shutil.rmtree(failed, onerror=unlock)
            else:
                os.unlink(failed)

    with contextlib.suppress(OSError):
        shutil.rmtree(path, onerror=unlock)


def sweep_stale(base: Path | None = None) -> list[Path]:
    """Remove the session folders of Loom processes that are gone; returns them."""
    base = base or system_temp()
    removed: list[Path] = []
    try:
        entries = list(os.scandir(base))
    except OSError:
        return removed
    uid = os.getuid()
    for entry in entries:
        if not entry.name.startswith(PREFIX):
            continue
        with contextlib.suppress(OSError):
            info = entry.stat(follow_symlinks=False)
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid:
                continue
            if time.time() - info.st_mtime < SWEEP_YOUNGER_THAN_S:
                continue
            if _owner_gone(Path(entry.path)):
                remove_tree(Path(entry.path))
                removed.append(Path(entry.path))
    return removed


def _owner_gone(folder: Path) -> bool:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False  # its Loom still runs
    finally:
        os.close(fd)  # (drops the lock we may have taken)
    return True


def sweep_soon(base: Path) -> None:
    """`sweep_stale` once per process, on a worker thread (a big leftover folder takes
    a while to remove, and no session waits for that)."""
    with _live_lock:
        if _sweeper:
            return
        _sweeper.append(
            threading.Thread(target=sweep_stale, args=(base,), name="loom-tmp-sweep", daemon=True)
        )
    _sweeper[0].start()


@atexit.register
def _close_all() -> None:
    """A process that ends without closing its sessions (a signal, an error) still
    removes their folders."""
    with _live_lock:
        live = list(_live)
    for temp in live:
        temp.close()
    if _sweeper and _sweeper[0].is_alive():  # a short run: let the sweep finish
        _sweeper[0].join(JOIN_SWEEP_AT_EXIT_S)
