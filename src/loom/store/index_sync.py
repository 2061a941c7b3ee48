"""Keeping the index in step with the thread files, cheaply.

Freshness check (every `loom list` / `loom search`, `ThreadIndex.is_fresh`): one
`stat` of `threads/` and one tiny query. Every create/delete/rename in a folder changes
its mtime, so if the folder's (device, inode, mtime) equals the recorded marker and no
save is announced as in flight, no thread file was added, replaced or removed since.
Otherwise a scan `stat`s every `T-*.json` and re-reads only files whose (inode, size,
mtime) differ from their index row (an atomic save always makes a new inode), indexes
new files, drops rows of vanished ones and quarantines unreadable ones.

A scan of PROGRESS_MIN_FILES changed files or more (the first index of a big history)
writes the summaries and headers only, what `loom list`, `show`, resume and the web's
list need; the message rows, ~88% of its work, are written before the next search
(loom.store.index_messages).

Saves keep the marker fresh, so a list right after a save needs no scan: a save
(LocalThreadStore.save) stages its temp file in data/tmp/ (so only its rename touches
threads/), announces itself in `thread_index_writes` with the folder's marker, renames,
then in one transaction indexes the thread, withdraws the announcement and moves the
marker on, if it had not moved meanwhile. A save killed after its rename leaves its
announcement behind, so readers scan (and drop announcements of dead processes);
Loom's own writers are therefore always seen, whatever the clock does.

Races: a scan records the folder stat taken *before* it, so a change during the scan
leaves the marker behind. Folder timestamps are coarse (a kernel tick, or whole seconds
on some filesystems): a change within the same tick as the recorded stat does not move
the mtime, so a scan does not record a marker within `racy_window_ns` of a change
("racy", as git calls it). A save's marker is racy by nature; what it can miss is a
file dropped into threads/ by another program in that same tick, so saves only vouch
for the folder for CHAIN_FOR_NS (a minute) after the last full scan, and a store whose
saves go on longer re-checks the folder in the background (`loom.store.folder_check`)
so its saves keep vouching and the next `loom list` stays fast. A file edited in
place (no rename) does not change the folder: `recheck_shown` stats the files of the
rows a list or search is about to show and re-reads those that changed, and `loom
doctor` compares every file (an edit that adds a word to a thread no search shows is
found at the next scan).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from loom.paths import LoomPaths
from loom.store.db import connect, migrate
from loom.store.db_repair import is_damage, quick_check, rebuild_database
from loom.store.index import (
    COMPONENT,
    HEADS,
    LAST_SCAN_KEY,
    MARKER_KEY,
    MESSAGES,
    MESSAGES_PENDING_KEY,
    MIGRATIONS,
    THREADS,
    ThreadIndex,
    dir_marker,
)
from loom.store.index_bulk import BULK_COMMIT_BYTES, bulk_build, bulk_read_ahead, grouped
from loom.store.index_parse import WORKERS, Parsed, parse_batch, parsed_batches
from loom.store.quarantine import quarantine_file
from loom.store.summary import IndexRecord

_DIRECT = "; reading thread files directly"
TICK_RACY_WINDOW_NS = 50_000_000  # a few kernel ticks (1-10 ms each)
COARSE_RACY_WINDOW_NS = 2_000_000_000  # filesystems that store whole seconds


def racy_window_ns(mtime_ns: int) -> int:
    """How long after a change its timestamp may still be shared by a later change.

    A folder mtime with no sub-second part suggests a filesystem with coarse timestamps
    (a fine-grained one shows .000000000 about once in 250 ticks: harmlessly slower).
    """
    return COARSE_RACY_WINDOW_NS if mtime_ns % 1_000_000_000 == 0 else TICK_RACY_WINDOW_NS


BATCH = 200
PROGRESS_MIN_FILES = 500
Progress = Callable[[int, int], None]
"""`progress(done, total)` while a scan (re)indexes many files (from (0, total) on)."""


class ScanReport:
    """What one freshness check did (a plain class: dataclasses cost start-up time)."""

    def __init__(self, scanned: bool = False) -> None:
        self.scanned = scanned
        self.indexed: list[str] = []
        self.removed: list[str] = []
        self.quarantined: list[tuple[Path, str]] = []
        self.repaired: list[tuple[str, str]] = []
        self.unreadable: list[tuple[Path, str]] = []
        self.deferred = 0  # files left to a foreground scan (`fix=False`)


def open_index(paths: LoomPaths) -> tuple[ThreadIndex, str | None]:
    """The index in loom.db, or an in-memory one (with a note why) if loom.db is unusable.

    A damaged loom.db is moved aside and rebuilt, keeping what else it held
    (loom.store.db_repair); the note says what was kept and lost.
    """
    try:
        return _open_file(paths.database), None
    except sqlite3.DatabaseError as exc:
        if not is_damage(exc):
            return _open_memory(), f"the index in {paths.database} is not usable ({exc}){_DIRECT}"
        return _rebuilt(paths, str(exc))


def _rebuilt(paths: LoomPaths, cause: str) -> tuple[ThreadIndex, str | None]:
    report = rebuild_database(paths.database, cause)
    if report.moved_to is None:
        return _open_memory(), f"the index in {paths.database} is damaged ({cause}){_DIRECT}"
    try:
        return _open_file(paths.database), report.describe()
    except sqlite3.Error as again:
        return _open_memory(), f"the index in {paths.database} is not usable ({again}){_DIRECT}"


def recover(index: ThreadIndex, paths: LoomPaths, cause: str = "") -> tuple[ThreadIndex, str]:
    """After a damage error on `index`: rebuild loom.db and return a fresh, full index."""
    cause = cause or quick_check(index.conn)
    with contextlib.suppress(sqlite3.Error):
        index.conn.close()
    fresh, note = _rebuilt(paths, cause)
    ensure_fresh(fresh, paths, force=True)
    return fresh, note or ""


def refresh(
    index: ThreadIndex, paths: LoomPaths, progress: Progress | None = None
) -> tuple[ThreadIndex, ScanReport, str | None]:
    """`ensure_fresh`, falling back to an in-memory index when loom.db cannot be written.

    If another process holds the database's write lock beyond the busy timeout (a
    rebuild), the index is used as it is rather than re-reading every file.
    """
    try:
        return index, ensure_fresh(index, paths, progress=progress), None
    except sqlite3.Error as exc:
        if is_damage(exc):
            fresh, note = _rebuilt(paths, str(exc))
            with contextlib.suppress(sqlite3.Error):
                index.conn.close()
            return fresh, ensure_fresh(fresh, paths, force=True, progress=progress), note
        if isinstance(exc, sqlite3.OperationalError) and (
            "locked" in str(exc) or "busy" in str(exc)
        ):
            return index, ScanReport(), f"the index is busy ({exc}); it may lag a moment"
        return _in_memory(index, paths, exc, progress)


def _in_memory(
    index: ThreadIndex, paths: LoomPaths, exc: sqlite3.Error, progress: Progress | None
) -> tuple[ThreadIndex, ScanReport, str | None]:
    index.conn.close()
    memory = _open_memory()
    note = f"the index in {paths.database} is not writable ({exc}){_DIRECT}"
    return memory, ensure_fresh(memory, paths, progress=progress), note


def _open_file(path: Path) -> ThreadIndex:
    if not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    conn = connect(path, check_same_thread=False)  # LocalThreadStore serialises access
    try:
        migrate(conn, COMPONENT, MIGRATIONS)
        for table in (HEADS, MESSAGES):  # damage in a virtual table shows only on use
            conn.execute(f"SELECT 1 FROM {table} LIMIT 0").fetchall()
    except BaseException:
        conn.close()
        raise
    return ThreadIndex(conn)


def _open_memory() -> ThreadIndex:
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    migrate(conn, COMPONENT, MIGRATIONS)
    return ThreadIndex(conn)


@contextlib.contextmanager
def write_transaction(index: ThreadIndex) -> Iterator[ThreadIndex]:
    index.conn.execute("BEGIN IMMEDIATE")
    try:
        yield index
    except BaseException:
        index.conn.execute("ROLLBACK")
        raise
    index.conn.execute("COMMIT")


def ensure_fresh(
    index: ThreadIndex,
    paths: LoomPaths,
    *,
    force: bool = False,
    progress: Progress | None = None,
    fix: bool = True,
) -> ScanReport:
    """Bring the index up to date with the files if the folder changed (see module doc).

    `fix=False` (a background check nobody watches): files that need quarantine or
    repair are left alone and the marker is not recorded, so the next `loom list`
    scans and tells the person about them."""
    if not force and index.is_fresh(paths.threads_dir):
        return ScanReport()
    marker, mtime_ns = dir_marker(paths.threads_dir)
    looked_at = time.time_ns()
    report = ScanReport(scanned=True)
    on_disk = scan_files(paths.threads_dir)
    known = index.file_stats()
    # Sorted: ids are time-ordered, so new threads get index numbers in creation order.
    changed = sorted(tid for tid, st in on_disk.items() if known.get(tid) != st)
    gone = [tid for tid in known if tid not in on_disk]
    many = len(changed) >= PROGRESS_MIN_FILES
    if progress is not None and many:
        progress(0, len(changed))
    with write_transaction(index):
        for tid in gone:
            index.remove(tid)
        report.removed.extend(gone)
        if many:  # summaries and headers first, message rows before the next search
            index.set_state(MESSAGES_PENDING_KEY, "1")
    batches = [changed[i : i + BATCH] for i in range(0, len(changed), BATCH)]
    ahead = bulk_read_ahead([on_disk[tid][1] for tid in changed], BATCH) if many else WORKERS * 2
    parsed = parsed_batches(paths.threads_dir, batches, ahead)
    read = _reported(parsed, len(changed), progress, many)
    with bulk_build(index.conn) if many else contextlib.nullcontext():
        # A big (re)build writes many files per transaction (see loom.store.index_bulk).
        for group in grouped(read, BULK_COMMIT_BYTES) if many else read:
            with write_transaction(index):
                _index_batch(index, paths, group, report, fix=fix, messages=not many)
    with write_transaction(index):
        _drop_stale_writes(index)
        if report.deferred:
            return report
        racy = looked_at - mtime_ns < racy_window_ns(mtime_ns)
        # Unreadable files do not hold the marker back: retrying them on every list
        # would make every list slow. They are reported now and by `loom doctor`.
        index.set_state(MARKER_KEY, "racy" if racy else marker)
        if not racy:
            index.set_state(LAST_SCAN_KEY, str(looked_at))
    return report


def _reported(
    batches: Iterator[list[Parsed]], total: int, progress: Progress | None, many: bool
) -> Iterator[list[Parsed]]:
    """`batches`, telling `progress` how many files were read so far (when `many`)."""
    done = 0
    for batch in batches:
        yield batch
        done += len(batch)
        if progress is not None and many:
            progress(done, total)


def _drop_stale_writes(index: ThreadIndex) -> None:
    import socket

    from loom.store.lock import pid_alive

    index.drop_stale_writes(socket.gethostname(), pid_alive, time.time_ns())


def scan_files(threads_dir: Path) -> dict[str, tuple[int, int, int]]:
    """`{thread id: (inode, size, mtime_ns)}` for every `T-*.json` in the folder."""
    found: dict[str, tuple[int, int, int]] = {}
    try:
        entries = os.scandir(threads_dir)
    except FileNotFoundError:
        return found
    with entries:
        for entry in entries:
            name = entry.name
            if name.startswith("T-") and name.endswith(".json"):
                try:
                    st = entry.stat()
                except OSError:
                    continue
                found[name[:-5]] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return found


def _index_batch(
    index: ThreadIndex,
    paths: LoomPaths,
    batch: list[Parsed],
    report: ScanReport,
    *,
    fix: bool,
    messages: bool = True,
) -> None:
    """Index the readable files of `batch` together (see ThreadIndex.upsert_many), drop
    vanished ones, quarantine bad ones (`fix`; else leave them for a foreground scan).
    `messages=False`: without their message rows (loom.store.index_messages)."""
    good = [ready for item in batch if (ready := _checked(index, paths, item, report, fix))]
    _private_as_recorded(paths, [record for record, _stat in good])
    index.upsert_many(good, messages=messages)
    report.indexed.extend(record.id for record, _stat in good)


def _private_as_recorded(paths: LoomPaths, records: list[IndexRecord]) -> None:
    """Threads Loom recorded private are indexed private whatever their files say
    (loom.store.private_record); all of them while the record cannot be read."""
    if not records:
        return
    from loom.store.private_record import PrivateRecord

    try:
        private = PrivateRecord(paths.private_threads_file).ids()
    except OSError:
        private = None
    for record in records:
        if not record.is_private and (private is None or record.id in private):
            record.is_private = True
            record.visibility = "private"


def _checked(
    index: ThreadIndex, paths: LoomPaths, item: Parsed, report: ScanReport, fix: bool
) -> tuple[IndexRecord, tuple[int, int, int]] | None:
    """A parsed file's record and stat to index, or None (handled here: gone, unreadable,
    quarantined)."""
    tid, st, record, raw = item
    if isinstance(record, IndexRecord) and not record.repairs and st is not None:
        return record, st  # the common case, first (no Path built: 100,000 of them)
    unreadable = isinstance(record, str) and record.startswith("!")
    if not fix and record is not None and not unreadable:
        report.deferred += 1  # to quarantine or repair: a foreground scan does it
        return None
    path = paths.threads_dir / f"{tid}.json"
    if st is None and record is None:  # vanished since the folder was listed
        index.remove(tid)
        return None
    if unreadable and isinstance(record, str):  # could not be read at all
        report.unreadable.append((path, record[1:]))
        return None
    if isinstance(record, str):
        index.remove(tid)
        moved = quarantine_file(path, paths.quarantine_dir, record)
        if moved is None:
            report.unreadable.append((path, record))
        else:
            report.quarantined.append((moved, record))
        return None
    assert st is not None and isinstance(record, IndexRecord)
    if record.repairs and raw is not None:
        from loom.store.repair import write_repaired

        if write_repaired(path, raw, record, paths.quarantine_dir):
            fresh = os.stat(path)
            st = (fresh.st_ino, fresh.st_size, fresh.st_mtime_ns)
            report.repaired.append((tid, "; ".join(record.repairs)))
    return record, st


def index_files(index: ThreadIndex, paths: LoomPaths, batch: list[Parsed]) -> ScanReport:
    """Index parsed files with their messages, in the caller's transaction (a file that
    changed since the index listed it: re-read as a scan would)."""
    report = ScanReport(scanned=True)
    _index_batch(index, paths, batch, report, fix=True)
    return report


def recheck_shown(index: ThreadIndex, paths: LoomPaths, ids: list[str]) -> bool:
    """Re-read the files of the threads about to be shown if they changed in place.

    An edit that rewrites a file without a rename (an editor, `sed -i` keeps the
    inode; a hand edit) leaves the folder's mtime alone, so the freshness check
    cannot see it. Stat-ing every file on every `loom list` would cost ~15-40 ms per
    10,000 threads (bench/threads_bench.py); stat-ing the ~20-50 rows shown costs well
    under a millisecond, and `loom doctor` compares them all. Returns True when
    something was re-indexed (the caller asks again)."""
    if not ids:
        return False
    marks = ",".join("?" * len(ids))
    known = {
        tid: (ino, size, mtime)
        for tid, ino, size, mtime in index.conn.execute(
            f"SELECT id, file_ino, file_size, file_mtime_ns FROM {THREADS} WHERE id IN ({marks})",
            ids,
        )
    }
    changed = []
    for tid in ids:
        try:
            st = os.stat(paths.threads_dir / f"{tid}.json")
        except OSError:
            changed.append(tid)  # gone: the re-read drops its row
            continue
        if known.get(tid) != (st.st_ino, st.st_size, st.st_mtime_ns):
            changed.append(tid)
    if not changed:
        return False
    report = ScanReport(scanned=True)
    with write_transaction(index):
        _index_batch(index, paths, parse_batch(str(paths.threads_dir), changed), report, fix=True)
    return True


def rebuild(index: ThreadIndex, paths: LoomPaths) -> ScanReport:
    """Drop everything and index every file again."""
    with write_transaction(index):
        index.clear()
    return ensure_fresh(index, paths, force=True)
