"""Keeping saves' word good: the threads folder re-checked in the background.

A save vouches for the folder (moves the index's marker, so the next `loom list` reads
only the index) only within CHAIN_FOR_NS of the last full scan: a file another program
drops into threads/ in the same clock tick as a save's rename is invisible to the
marker, and the periodic scan is what finds it (see `loom.store.index_sync`). A session
lasts longer than that, and then the first `loom list` after it used to rescan every
thread file (0.6 s at 100,000 threads).

So when a save finds the last full scan older than that, the store re-checks the folder
itself, on a thread of its own: it waits until the folder has been still for the racy
window, scans it over its own connection (what `loom list` would have done), then moves
the marker across the changes its own saves made meanwhile, if those are the only ones.
Saves vouch again from then on. The thread is not a daemon: a short `loom run` waits for
it at exit rather than leave the scan to the next `loom list`.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable

from loom.paths import LoomPaths
from loom.store.index import CHAIN_FOR_NS, MARKER_KEY, ThreadIndex, dir_marker
from loom.store.index_sync import ensure_fresh, open_index, racy_window_ns, write_transaction

log = logging.getLogger(__name__)

QUIET_WAIT_S = 0.1  # how long to wait between looks for a still folder
QUIET_TRIES = 50  # then give up until the next save


class FolderCheck:
    """One store's background re-check (at most one at a time)."""

    def __init__(
        self, paths: LoomPaths, guard: threading.RLock, index: Callable[[], ThreadIndex]
    ) -> None:
        self.paths = paths
        self._guard = guard  # the store's: held while the marker is moved
        self._index = index  # the store's own index (its connection)
        self._thread: threading.Thread | None = None
        self._moves: list[tuple[str, str]] | None = None  # our saves' (before, after)
        self.completed = 0

    def after_save(self, before: str, after: str, last_scan_ns: int, now_ns: int) -> None:
        """Called by a save (with the store's guard held) once its file is in place."""
        if self._moves is not None:
            self._moves.append((before, after))
        if not last_scan_ns or now_ns - last_scan_ns < CHAIN_FOR_NS or self.running:
            return  # never scanned (the first `loom list` builds the index) or recent
        self._moves = []
        self._thread = threading.Thread(target=self._run, name="loom-folder-check")
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def wait(self, timeout: float | None = None) -> None:
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _run(self) -> None:
        try:
            if self._wait_until_still():
                self._check()
        except (OSError, sqlite3.Error) as exc:  # the next save or list tries again
            log.debug("re-checking %s failed: %s", self.paths.threads_dir, exc)
        finally:
            with self._guard:
                self._moves = None

    def _wait_until_still(self) -> bool:
        """True once the folder's last change is older than the racy window (a scan
        started sooner could not vouch for it)."""
        for _ in range(QUIET_TRIES):
            _marker, mtime_ns = dir_marker(self.paths.threads_dir)
            if time.time_ns() - mtime_ns >= racy_window_ns(mtime_ns):
                return True
            time.sleep(QUIET_WAIT_S)
        return False

    def _check(self) -> None:
        index, _note = open_index(self.paths)
        try:
            report = ensure_fresh(index, self.paths, force=True, fix=False)
        finally:
            index.conn.close()
        if report.deferred:
            return  # files to quarantine or repair: the next `loom list` does it and says so
        with self._guard:
            moves, self._moves = self._moves or [], None
            main = self._index()
            with write_transaction(main):
                stored = main.get_state(MARKER_KEY)
                for before, after in moves:  # only our own saves changed it since
                    if before == stored:
                        stored = after
                if stored is not None and stored == dir_marker(self.paths.threads_dir)[0]:
                    main.set_state(MARKER_KEY, stored)
        self.completed += 1
