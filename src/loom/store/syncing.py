"""SyncingThreadStore: the local store plus background sync to the team server.

`save` writes the local file, queues the thread (durably) and wakes a background
thread that pushes it; it never waits for the network. `save_and_sync` waits until the
server has it. Private threads never leave the machine: they are not queued, and a
queued entry whose thread turned private is dropped before any request is made.

On 409 the server's copy is merged with ours (core/merge.py) and pushed again; a
divergence, a failure or a rejected token is reported through `on_event`, which the
session layer turns into SyncError events.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from loom.core.clock import now_iso
from loom.core.events import SyncError
from loom.core.merge import merge_threads
from loom.core.thread import Thread
from loom.store.pending import AckedVersions, PendingEntry, PendingSyncQueue, SyncOperation
from loom.store.private_record import PrivateRecordUnreadable
from loom.store.sync_client import (
    SyncAuthError,
    SyncClientError,
    SyncConflict,
    SyncRejected,
    SyncUnavailable,
    ThreadSyncClient,
)

log = logging.getLogger(__name__)
MAX_MERGE_ROUNDS = 5
FLUSH_EVERY = 100  # queue/acked bookkeeping is written in batches while draining
DRAIN_CONCURRENCY = 4  # pushes in flight at once; the server is stateless and concurrent


@dataclass(frozen=True)
class SyncNotice:
    """Something the person should hear about. `thread` is the merged copy on conflicts."""

    kind: Literal["conflict", "failed", "auth"]
    thread_id: str
    message: str
    thread: Thread | None = None

    def as_event(self, session_id: str) -> SyncError:
        """The session event faces show (core.events.SyncError)."""
        return SyncError(session_id=session_id, thread_id=self.thread_id, message=self.message)


@dataclass
class DrainReport:
    pushed: int = 0
    failed: int = 0
    unavailable: str | None = None  # why the server could not be reached
    next_due: float | None = None  # seconds until a backed-off entry is due
    notices: list[SyncNotice] = field(default_factory=list)
    bookkeeping: list[str] = field(default_factory=list)  # damage found and repaired


@dataclass
class PullReport:
    checked: int = 0
    pulled: int = 0
    merged: int = 0


class SyncingThreadStore:
    def __init__(
        self,
        local: Any,
        client: ThreadSyncClient,
        queue: PendingSyncQueue,
        acked: AckedVersions,
        *,
        on_event: Callable[[SyncNotice], None] | None = None,
        background: bool = True,
        max_backoff: float = 30.0,
        only_project: Path | None = None,
    ) -> None:
        self.local = local
        # A server a (trusted) project chose gets that project's threads only: the
        # queue is the person's, and other projects' threads wait for their own server.
        self.only_project = only_project
        self.client = client
        self.queue = queue
        self.acked = acked
        self.on_event = on_event
        self.max_backoff = max_backoff
        self._locks_guard = threading.Lock()
        self._thread_locks: dict[str, threading.Lock] = {}
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._worker: threading.Thread | None = None
        if background:
            self.start()

    # -- the ThreadStore protocol; reads are local -----------------------------------

    def load(self, thread_id: str) -> Thread | None:
        return self.local.load(thread_id)

    def list(self, limit: int = 50) -> Any:
        return self.local.list(limit)

    def search(self, query: str, limit: int = 20) -> Any:
        return self.local.search(query, limit)

    def __getattr__(self, name: str) -> Any:
        # resolve, writing, doctor, ... : whatever else the local store offers.
        if name == "local":  # not set yet (half-built object): no recursion
            raise AttributeError(name)
        return getattr(self.local, name)

    def save(self, thread: Thread) -> None:
        self.local.save(thread)  # a thread Loom recorded private comes back private
        if thread.is_private:
            if self.acked.get(thread.id):
                # Made private after it was synced: take the server's copy down (the
                # request carries only the id).
                self.queue.enqueue(thread.id, SyncOperation.DELETE)
                self._wake.set()
            return
        self.queue.enqueue(thread.id, SyncOperation.UPSERT)
        self._wake.set()

    def delete(self, thread_id: str) -> None:
        thread = self.local.load(thread_id)
        self.local.delete(thread_id)
        if thread is not None and thread.is_private:
            return
        self.queue.enqueue(thread_id, SyncOperation.DELETE)
        self._wake.set()

    def restore(self, ref: str) -> str:
        """Restore locally, then queue it so the server copy comes back too."""
        thread_id = self.local.restore(ref)
        thread = self.local.load(thread_id)
        if thread is not None and not thread.is_private:
            self.queue.enqueue(thread_id, SyncOperation.UPSERT)
            self._wake.set()
        return thread_id

    def save_and_sync(self, thread: Thread) -> None:
        """Save, then push now; raises SyncClientError if the server does not take it
        (the thread stays saved locally and queued)."""
        self.save(thread)
        entry = self.queue.get(thread.id)
        if entry is None:  # the background thread pushed it already
            return
        with self._lock_for(thread.id):
            try:
                self._push(entry, None)
            except SyncClientError as exc:
                self.queue.record_failure(thread.id, str(exc))
                raise
        self.queue.remove([(entry.thread_id, entry.seq)])

    # -- pushing ----------------------------------------------------------------------

    def _push(self, entry: PendingEntry, batch: dict[str, int | None] | None) -> None:
        """Push one entry. The acknowledged version goes into `batch` (written later by
        `drain`) or, when `batch` is None, straight to the file."""
        if entry.operation is SyncOperation.DELETE:
            self.client.delete(entry.thread_id)
            self._ack(entry.thread_id, None, batch)
            return
        thread = self.local.load(entry.thread_id)
        if thread is None or thread.is_private or self._recorded_private(thread.id):
            return  # gone or made private since it was queued: nothing may be sent
        if batch is not None and thread.id in batch:
            expected = batch[thread.id] or 0
        else:
            expected = self.acked.get(thread.id)
        for _round in range(MAX_MERGE_ROUNDS):
            try:
                result = self.client.upsert(thread, expected)
            except SyncConflict as conflict:
                thread, expected, done = self._merge(thread, conflict.server_thread)
                if done:
                    self._ack(thread.id, expected, batch)
                    return
                continue
            self._ack(thread.id, result.version, batch)
            return
        raise SyncRejected(f"thread {entry.thread_id} kept changing on the server; will retry", 409)

    def _goes_here(self, entry: PendingEntry) -> bool:
        """Whether this store's server may get `entry`: any, unless the server is one a
        project chose; then only threads that worked in that project (a delete names no
        project, so it waits for the person's own server)."""
        if self.only_project is None:
            return True
        if entry.operation is SyncOperation.DELETE:
            return False
        thread = self.local.load(entry.thread_id)
        root = thread.workspace_root if thread is not None else None
        return root is not None and Path(root).is_relative_to(self.only_project)

    def _recorded_private(self, thread_id: str) -> bool:
        """Loom's own record says private (whatever the file says); while the record
        cannot be read nothing is pushed (SyncRejected: the entry stays queued)."""
        record = getattr(self.local, "private", None)
        if record is None:
            return False
        try:
            return bool(record.holds(thread_id))
        except PrivateRecordUnreadable as exc:
            raise SyncRejected(str(exc.strerror), 0) from exc

    def _merge(self, ours: Thread, theirs: Thread) -> tuple[Thread, int, bool]:
        """Merge after a 409: (copy to push, expected version, already in sync?)."""
        result = merge_threads(ours, theirs)
        if result.thread.model_dump(mode="json") != ours.model_dump(mode="json"):
            try:
                self.local.save(result.thread)
            except Exception as exc:  # the merged copy still goes to the server
                log.warning("could not save merged copy of %s locally: %s", ours.id, exc)
        if result.report.diverged:
            self._notify(
                SyncNotice("conflict", ours.id, result.report.describe(ours.id), result.thread)
            )
        return result.thread, theirs.version, result.same_as_remote

    def _ack(
        self, thread_id: str, version: int | None, batch: dict[str, int | None] | None
    ) -> None:
        if batch is None:
            self.acked.update({thread_id: version})
        else:
            batch[thread_id] = version

    def check_bookkeeping(self) -> list[str]:
        """Read the queue and acknowledged versions (repairing damage, see
        pending_salvage); after damage, queue again what the server may lack. Returns
        what happened, also told through `on_event` (once)."""
        self.queue.entries()
        self.acked.all()
        notes = self.queue.take_notes() + self.acked.take_notes()
        if notes:
            from loom.store.sync_backlog import login_time, requeue_unacknowledged

            paths = getattr(self.local, "paths", None)
            since = login_time(paths) if paths is not None else None
            again = requeue_unacknowledged(self.local, self.queue, self.acked, since)
            notes.append(
                f"queued {len(again)} more local thread(s) whose newest version the server "
                "has not acknowledged"
            )
            for note in notes:
                self._notify(SyncNotice("failed", "", note))
        return notes

    def drain(self) -> DrainReport:
        """Push every due entry once, DRAIN_CONCURRENCY at a time. Stops early when the
        server is unreachable or refuses the token."""
        report = DrainReport()
        report.bookkeeping = self.check_bookkeeping()
        done: list[tuple[str, int]] = []
        acked_batch: dict[str, int | None] = {}
        bookkeeping = threading.Lock()
        halt = threading.Event()
        now = now_iso()
        due: list[PendingEntry] = []
        for entry in self.queue.entries():
            wait = entry.due_in(now, cap=self.max_backoff * 10)
            if not self._goes_here(entry):
                continue
            if wait > 0:
                report.next_due = min(wait, report.next_due or wait)
            else:
                due.append(entry)

        def push_one(entry: PendingEntry) -> None:
            if halt.is_set() or self._stop.is_set():
                return
            acked: dict[str, int | None] = {}
            try:
                with self._lock_for(entry.thread_id):
                    self._push(entry, acked)
            except SyncUnavailable as exc:
                halt.set()
                self.queue.record_failure(entry.thread_id, str(exc))
                with bookkeeping:
                    report.unavailable = report.unavailable or str(exc)
                return
            except SyncClientError as exc:
                if isinstance(exc, SyncAuthError):
                    halt.set()
                self.queue.record_failure(entry.thread_id, str(exc))
                kind = "auth" if isinstance(exc, SyncAuthError) else "failed"
                notice = SyncNotice(kind, entry.thread_id, str(exc))
                with bookkeeping:
                    report.failed += 1
                    report.notices.append(notice)
                self._notify(notice)
                return
            with bookkeeping:
                report.pushed += 1
                done.append((entry.thread_id, entry.seq))
                acked_batch.update(acked)
                if len(done) >= FLUSH_EVERY:
                    self._flush(done, acked_batch)

        try:
            if len(due) <= 1:
                for entry in due:
                    push_one(entry)
            else:
                with ThreadPoolExecutor(DRAIN_CONCURRENCY, "loom-sync-push") as pool:
                    list(pool.map(push_one, due))
        finally:
            with bookkeeping:
                self._flush(done, acked_batch)
        return report

    def _lock_for(self, thread_id: str) -> threading.Lock:
        """One push at a time per thread (the background drain and save_and_sync)."""
        with self._locks_guard:
            return self._thread_locks.setdefault(thread_id, threading.Lock())

    def _flush(self, done: list[tuple[str, int]], acked: dict[str, int | None]) -> None:
        # Acks first: a crash between the two only replays pushes, which is safe.
        if acked:
            self.acked.update(dict(acked))
            acked.clear()
        if done:
            self.queue.remove(list(done))
            done.clear()

    # -- pulling ----------------------------------------------------------------------

    def pull(self, page_size: int = 200) -> PullReport:
        """Bring in this user's threads that changed on the server, merging with ours."""
        report = PullReport()
        known = self.acked.all()
        cursor: str | None = None
        while True:
            page, cursor = self.client.list_page(page_size, cursor, mine=True)
            for item in page:
                report.checked += 1
                if int(item["version"]) <= known.get(item["id"], 0):
                    continue
                theirs = self.client.get(item["id"])
                if theirs is None:
                    continue
                ours = self.local.load(theirs.id)
                if ours is None:
                    self.local.save(theirs)
                    report.pulled += 1
                else:
                    _, _, same = self._merge(ours, theirs)
                    if not same:
                        self.queue.enqueue(theirs.id, SyncOperation.UPSERT)
                    report.merged += 1
                self.acked.update({theirs.id: theirs.version})
            if not cursor:
                return report

    # -- the background thread --------------------------------------------------------

    def start(self) -> None:
        if self._worker is None or not self._worker.is_alive():
            self._stop.clear()
            self._worker = threading.Thread(target=self._run, name="loom-sync", daemon=True)
            self._worker.start()
            self._wake.set()  # retry what an earlier run left queued

    def _run(self) -> None:
        failures = 0
        while not self._stop.is_set():
            self._wake.wait()
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                report = self.drain()
            except Exception as exc:  # never let the sync thread die silently
                log.exception("sync drain failed")
                self._notify(SyncNotice("failed", "", f"sync stopped unexpectedly: {exc}"))
                report = DrainReport(unavailable=str(exc))
            if report.unavailable:
                failures += 1
                delay = min(self.max_backoff, 0.5 * 2 ** (failures - 1))
                # Jitter so many clients coming back do not arrive at once.
                self._stop.wait(delay * random.uniform(0.5, 1.0))
                self._wake.set()
                continue
            failures = 0
            if report.next_due is not None:
                timer = threading.Timer(report.next_due, self._wake.set)
                timer.daemon = True
                timer.start()

    def kick(self) -> None:
        self._wake.set()

    def wait_idle(self, timeout: float) -> bool:
        """Wait until the queue is empty (for tests and `loom sync`); True if it is."""
        deadline = threading.Event()
        for _ in range(int(timeout / 0.05) + 1):
            if not self.queue.entries():
                return True
            deadline.wait(0.05)
        return not self.queue.entries()

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._worker is not None:
            self._worker.join(timeout=5)
        self.client.close()

    def status(self) -> dict[str, Any]:
        entries = self.queue.entries()
        return {
            "server": self.client.server_url,
            "pending": len(entries),
            "last_error": self.queue.last_error(),
        }

    def _notify(self, notice: SyncNotice) -> None:
        if self.on_event is None:
            log.info("sync: %s", notice.message)
            return
        try:
            self.on_event(notice)
        except Exception:
            log.exception("sync on_event callback failed")
