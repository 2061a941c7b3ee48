"""`loom doctor`: compare the index with the thread files, and repair what drifted.

Checks: the database opens and passes SQLite's quick_check; every `T-*.json` has an
index row with the same (inode, size, mtime) and every row has a file; which files
would be quarantined; writer locks nobody holds; what is in quarantine. Temp files of
killed saves are removed on the way (they hold nothing a thread file lacks) and only
mentioned. `repair` rebuilds the index from the files (a damaged loom.db is replaced,
keeping what else it holds) and removes unheld locks; `restore` takes a file someone
fixed back from quarantine.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from loom.core.errors import LoomError
from loom.paths import LoomPaths
from loom.store.db_repair import is_damage, quick_check, rebuild_database
from loom.store.index_sync import open_index, rebuild, scan_files
from loom.store.lock import lock_holder
from loom.store.quarantine import REASON_SUFFIX, QuarantinedFile, list_quarantined
from loom.store.summary import BadThreadFile, parse_thread_bytes
from loom.store.tempfiles import clean_stale_temp_files


@dataclass
class DoctorReport:
    threads: int = 0
    indexed: int = 0
    database: str = "ok"
    not_indexed: list[str] = field(default_factory=list)
    outdated: list[str] = field(default_factory=list)
    orphaned_rows: list[str] = field(default_factory=list)
    bad_files: list[tuple[str, str]] = field(default_factory=list)
    unheld_locks: list[Path] = field(default_factory=list)
    quarantined: list[QuarantinedFile] = field(default_factory=list)
    cleaned_temp_files: tuple[int, int] = (0, 0)
    """(count, bytes) of temp files of killed saves removed while looking."""
    repaired: list[str] = field(default_factory=list)

    @property
    def index_drift(self) -> bool:
        """The index lags the files: `loom list` or `--repair` brings it up to date."""
        return bool(self.not_indexed or self.outdated or self.orphaned_rows)

    @property
    def needs_a_person(self) -> list[QuarantinedFile]:
        """Quarantined files someone has to fix (or delete); repaired originals are not."""
        return [q for q in self.quarantined if q.needs_a_person]

    @property
    def problems(self) -> int:
        return (
            len(self.not_indexed)
            + len(self.outdated)
            + len(self.orphaned_rows)
            + len(self.bad_files)
            + len(self.unheld_locks)
            + len(self.needs_a_person)
            + (self.database != "ok")
        )

    @property
    def healthy(self) -> bool:
        return self.problems == 0


def diagnose(paths: LoomPaths) -> DoctorReport:
    """Look (removing only temp files of killed saves), change nothing else."""
    report = DoctorReport()
    report.cleaned_temp_files = clean_stale_temp_files(paths)
    index, note = open_index(paths)
    if note:
        report.database = note
    try:
        check = quick_check(index.conn)
        if check != "ok":
            report.database = f"damaged (quick_check: {check})"
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
    report.unheld_locks = unheld_locks(paths)
    report.quarantined = list_quarantined(paths.quarantine_dir)
    return report


def repair(paths: LoomPaths) -> DoctorReport:
    """Rebuild the index from the files, then remove leftovers; report what remains."""
    done: list[str] = []
    count, freed = clean_stale_temp_files(paths)
    if count:
        done.append(f"removed {count} temp file(s) of killed saves ({_size(freed)})")
    for path in unheld_locks(paths):
        with contextlib.suppress(OSError):
            path.unlink()
            done.append(f"removed unheld lock {path.name}")
    index, note = open_index(paths)
    if note:
        done.append(note)
    try:
        check = quick_check(index.conn)
        if check != "ok":
            index.conn.close()
            done.append(rebuild_database(paths.database, f"quick_check: {check}").describe())
            index, _ = open_index(paths)
        scan = rebuild(index, paths)
    except sqlite3.DatabaseError as exc:
        if not is_damage(exc):
            raise
        index.conn.close()
        done.append(rebuild_database(paths.database, str(exc)).describe())
        index, _ = open_index(paths)
        scan = rebuild(index, paths)
    finally:
        index.conn.close()
    done.append(f"rebuilt the index from {len(scan.indexed)} thread files")
    done += [f"quarantined {p.name}: {why}" for p, why in scan.quarantined]
    done += [f"repaired {tid}: {why}" for tid, why in scan.repaired]
    after = diagnose(paths)
    after.repaired = done
    return after


class RestoreError(LoomError):
    """A quarantined file that cannot go back (yet); the message says why and what to do."""


def restore(paths: LoomPaths, name: str) -> str:
    """Move a fixed file back from quarantine into threads/; returns the thread id.

    `name` is the file's name in quarantine or a path to it. The file must now read as
    a thread whose id matches its name (a numbered duplicate such as `T-x.json.2` goes
    back as `T-x.json`), and no thread file of that id may exist.
    """
    source = _quarantined_path(paths, name)
    raw = _read(source)
    thread_id = source.name.split(".json", 1)[0]
    try:
        record = parse_thread_bytes(raw, thread_id)
        from loom.store.local import _thread_from_bytes

        _thread_from_bytes(raw if not record.repairs else _json_bytes(record.repaired_data))
    except (BadThreadFile, ValueError) as exc:
        reason = str(exc).splitlines()[0][:300]
        raise RestoreError(
            f"{source.name} still cannot be read: {reason}; fix it (it is a JSON thread file)"
            " and run `loom doctor --restore` again"
        ) from None
    target = paths.threads_dir / f"{thread_id}.json"
    if target.exists():
        raise RestoreError(
            f"{target} exists already; move it away first if the quarantined copy is the one "
            "to keep"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.rename(source, target)
    except OSError as exc:
        raise RestoreError(f"could not move {source} back: {exc.strerror or exc}") from exc
    with contextlib.suppress(OSError):
        Path(f"{source}{REASON_SUFFIX}").unlink()
    return thread_id


def _quarantined_path(paths: LoomPaths, name: str) -> Path:
    candidate = Path(name)
    inside = paths.quarantine_dir / candidate.name
    if candidate.name.endswith(REASON_SUFFIX):
        inside = paths.quarantine_dir / candidate.name[: -len(REASON_SUFFIX)]
    if not inside.is_file():
        known = [q.path.name for q in list_quarantined(paths.quarantine_dir)]
        listing = ", ".join(known[:5]) if known else "quarantine is empty"
        raise RestoreError(f"no file {candidate.name} in {paths.quarantine_dir} ({listing})")
    return inside


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise RestoreError(f"could not read {path}: {exc.strerror or exc}") from exc


def _json_bytes(data: object) -> bytes:
    import json

    return json.dumps(data).encode()


def _size(count: int) -> str:
    return f"{count / 1e6:.1f} MB" if count >= 100_000 else f"{count} bytes"


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
