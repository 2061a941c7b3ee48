"""Temp files left by saves that were killed: found and removed, never counted as harm.

A save writes `.<name>.<pid>.tmp` (in data/tmp/, or next to the file) and holds an
flock on it while writing; the rename that follows takes well under a second. A temp
file that is unlocked and older than a minute, or whose process is gone, belongs to a
save that will never finish: its content is also in no thread file, by construction
(the old file stays until the rename), so removing it loses nothing.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import time
from pathlib import Path

from loom.paths import LoomPaths
from loom.store.lock import pid_alive

_TEMP = re.compile(r"^\.(.+)\.(\d+)\.tmp$")
TEMP_GRACE_S = 60


def stale_temp_files(paths: LoomPaths, now: float | None = None) -> list[Path]:
    """Temp files of saves that died, in data/tmp/ and threads/ (oldest Looms)."""
    now = time.time() if now is None else now
    found = []
    for folder in (paths.data / "tmp", paths.threads_dir):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            match = _TEMP.match(name)
            if not match:
                continue
            path = folder / name
            with contextlib.suppress(OSError):
                old = now - path.stat().st_mtime > TEMP_GRACE_S
                if (old or not pid_alive(int(match[2]))) and not _locked(path):
                    found.append(path)
    return sorted(found)


def clean_stale_temp_files(paths: LoomPaths) -> tuple[int, int]:
    """Remove stale temp files; returns (how many, bytes freed)."""
    count = freed = 0
    for path in stale_temp_files(paths):
        with contextlib.suppress(OSError):
            size = path.stat().st_size
            path.unlink()
            count += 1
            freed += size
    return count, freed


def _locked(path: Path) -> bool:
    """Whether a save still holds the file (its flock)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops our own lock at once
    return False
