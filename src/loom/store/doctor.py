"""`loom doctor`: compare the index with the thread files, and repair what drifted.

Checks: the database opens and passes SQLite's quick_check; every `T-*.json` has an
index row with the same (inode, size, mtime) and every row has a file; which files
would be quarantined; leftover temp files from a killed save; writer locks nobody
holds; what is in quarantine. `repair` rebuilds the index from the files (quarantining
bad ones) and removes leftover temp files and unheld locks.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

from loom.paths import LoomPaths
from loom.store.index_sync import open_index, rebuild, scan_files
from loom.store.lock import lock_holder, pid_alive
from loom.store.quarantine import QuarantinedFile, list_quarantined
from loom.store.summary import BadThreadFile, parse_thread_bytes

_TEMP = re.compile(r"^\.(T-.+\.json)\.(\d+)\.tmp$")
TEMP_GRACE_S = 60


@dataclass
class DoctorReport:
    threads: int = 0
    indexed: int = 0
    database: str = "ok"
    not_indexed: list[str] = field(default_factory=list)
    outdated: list[str] = field(default_factory=list)
    orphaned_rows: list[str] = field(default_factory=list)
    bad_files: list[tuple[str, str]] = field(default_factory=list)
    temp_files: list[Path] = field(default_factory=list)
    unheld_locks: list[Path] = field(default_factory=list)
    quarantined: list[QuarantinedFile] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        return not (
            self.not_indexed
            or self.outdated
            or self.orphaned_rows
            or self.bad_files
            or self.temp_files
            or self.database != "ok"
        )


def diagnose(paths: LoomPaths) -> DoctorReport:
    """Look, change nothing."""
    report = DoctorReport()
    index, note = open_index(paths)
    if note:
        report.database = note
    try:
        check = index.conn.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            report.database = f"quick_check: {check}"
        known = index.file_stats()
    except sqlite3.Error as exc:
        report.database = f"unreadable ({exc})"
        known = {}
    finally:
        index.conn.close()
    on_disk = scan_files(paths.threads_dir)
    report.threads, report.indexed = len(on_disk), len(known)
    for tid, st in sorted(on_disk.items()):
        if known.get(tid) == st:
            continue
        (report.outdated if tid in known else report.not_indexed).append(tid)
        try:
            parse_thread_bytes((paths.threads_dir / f"{tid}.json").read_bytes(), tid)
        except BadThreadFile as exc:
            report.bad_files.append((tid, str(exc)))
        except OSError as exc:
            report.bad_files.append((tid, exc.strerror or str(exc)))
    report.orphaned_rows = sorted(tid for tid in known if tid not in on_disk)
    report.temp_files = leftover_temp_files(paths)
    report.unheld_locks = unheld_locks(paths)
    report.quarantined = list_quarantined(paths.quarantine_dir)
    return report


def repair(paths: LoomPaths) -> DoctorReport:
    """Rebuild the index from the files, then remove leftovers; report what remains."""
    done: list[str] = []
    for path in leftover_temp_files(paths):
        with contextlib.suppress(OSError):
            path.unlink()
            done.append(f"removed leftover temp file {path.name}")
    for path in unheld_locks(paths):
        with contextlib.suppress(OSError):
            path.unlink()
            done.append(f"removed unheld lock {path.name}")
    index, note = open_index(paths)
    if note:
        done.append(note)
    try:
        scan = rebuild(index, paths)
    finally:
        index.conn.close()
    done.append(f"rebuilt the index from {len(scan.indexed)} thread files")
    done += [f"quarantined {p.name}: {why}" for p, why in scan.quarantined]
    after = diagnose(paths)
    after.repaired = done
    return after


def leftover_temp_files(paths: LoomPaths) -> list[Path]:
    """Temp files of saves whose process is gone (or that are older than a minute),
    in data/tmp/ (where saves stage files) and threads/ (older Looms, fallbacks)."""
    found = []
    for folder in (paths.data / "tmp", paths.threads_dir):
        try:
            names = os.listdir(folder)
        except FileNotFoundError:
            continue
        for name in names:
            match = _TEMP.match(name)
            if not match:
                continue
            path = folder / name
            with contextlib.suppress(OSError):
                old = time.time() - path.stat().st_mtime > TEMP_GRACE_S
                if old or not pid_alive(int(match[2])):
                    found.append(path)
    return sorted(found)


def unheld_locks(paths: LoomPaths) -> list[Path]:
    try:
        names = os.listdir(paths.locks_dir)
    except FileNotFoundError:
        return []
    return sorted(
        paths.locks_dir / n
        for n in names
        if n.endswith(".lock") and lock_holder(paths.locks_dir, n[:-5]) is None
    )
