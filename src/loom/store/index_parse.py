"""Reading thread files for the index, in worker processes when there are many.

The first `loom list` on a big history reads every file: about a third of that time is
reading and parsing JSON (pure Python), the rest is SQLite writing the index. With
PARALLEL_MIN files or more, worker processes read and parse batches while this process
writes the previous ones into SQLite, so both cores work. Workers are forked, and only
from a process with one thread (forking a threaded process can copy a held lock); else
the files are read here, one batch at a time.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

from loom.store.summary import BadThreadFile, IndexRecord, parse_thread_bytes

PARALLEL_MIN = int(os.environ.get("LOOM_INDEX_PARALLEL_MIN", "2000"))
WORKERS = 2

Parsed = tuple[str, "tuple[int, int, int] | None", "IndexRecord | str | None", bytes | None]
"""(thread id, file stat, the record or why the file is bad (str) or None if gone,
raw bytes when the record needs them to be written back repaired)."""


def parse_file(threads_dir: str, tid: str) -> Parsed:
    path = os.path.join(threads_dir, f"{tid}.json")
    try:
        with open(path, "rb") as handle:
            st = os.fstat(handle.fileno())
            raw = handle.read()
    except FileNotFoundError:
        return tid, None, None, None
    except OSError as exc:
        return tid, None, f"!{exc.strerror or exc}", None
    from loom.core.ids import is_thread_id

    stat = (st.st_ino, st.st_size, st.st_mtime_ns)
    try:
        if not is_thread_id(tid):
            raise BadThreadFile("the file name is not a thread id (T-<uuidv7>.json)")
        record = parse_thread_bytes(raw, tid)
    except BadThreadFile as exc:
        return tid, stat, str(exc), None
    return tid, stat, record, raw if record.repairs else None


def parse_batch(threads_dir: str, tids: list[str]) -> list[Parsed]:
    return [parse_file(threads_dir, tid) for tid in tids]


def parsed_batches(
    threads_dir: Path, batches: list[list[str]], ahead: int = WORKERS * 2
) -> Iterator[list[Parsed]]:
    """Each batch's parsed files, in order, with up to `ahead` batches read in advance
    by the workers (a writer taking its batches in groups wants a group's worth)."""
    folder = str(threads_dir)
    total = sum(len(b) for b in batches)
    if total < PARALLEL_MIN or threading.active_count() > 1 or not hasattr(os, "fork"):
        for batch in batches:
            yield parse_batch(folder, batch)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("fork")
    pool = ProcessPoolExecutor(
        WORKERS,
        mp_context=context,
        initializer=_leave_signals_to_parent,
        initargs=(os.getpid(),),
    )
    try:
        # A bounded window of batches in flight keeps memory flat on huge histories.
        window = max(ahead, WORKERS)
        futures = [pool.submit(parse_batch, folder, b) for b in batches[:window]]
        for i in range(len(batches)):
            result = futures[i].result()
            if i + window < len(batches):
                futures.append(pool.submit(parse_batch, folder, batches[i + window]))
            futures[i] = None  # type: ignore[call-overload]
            yield result
    finally:
        # Ctrl-C or an error: do not wait for batches nobody will read.
        pool.shutdown(wait=False, cancel_futures=True)


def _leave_signals_to_parent(parent: int) -> None:
    """Ctrl-C reaches the whole process group: the parent stops the scan and says so;
    workers only stop when it tells them (no traceback from each of them). A parent
    killed on its own (SIGTERM, SIGKILL) takes its workers along (Linux: the
    parent-death signal), so none is left holding the terminal."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # it died before the line above took effect
        os._exit(0)
