"""PendingSyncQueue: what still has to reach the sync server, persisted across restarts.

One entry per thread (the newest operation wins: an Upsert after a Delete replaces it).
Every change is written atomically (store/atomic.py) before the call returns, under a
file lock so a `loom sync` and a running session can share the queue. Entries carry a
`seq`: a push removes only the entry it pushed, so a save that lands meanwhile stays
queued. Replaying an entry is always safe: the server answers a repeat with 409 and
the same copy, which the client recognises as already synced.

AckedVersions keeps, per thread, the last version the server acknowledged; it is sent
as `expected_version` on the next push.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from loom.core.clock import now_iso, parse_iso
from loom.store.atomic import atomic_write_bytes
from loom.store.pending_salvage import Salvage, salvage_acked, salvage_queue


class SyncOperation(StrEnum):
    UPSERT = "Upsert"
    DELETE = "Delete"


@dataclass
class PendingEntry:
    thread_id: str
    operation: SyncOperation
    seq: int
    enqueued_at: str = field(default_factory=now_iso)
    failed_at: str | None = None
    retry_count: int = 0
    last_error: str | None = None

    def due_in(self, now_iso_text: str, base: float = 1.0, cap: float = 300.0) -> float:
        """Seconds until this entry should be retried (0 when due)."""
        if self.failed_at is None or self.retry_count == 0:
            return 0.0
        delay = min(cap, base * 2 ** (self.retry_count - 1))
        waited = (parse_iso(now_iso_text) - parse_iso(self.failed_at)).total_seconds()
        return max(0.0, delay - waited)


class _LockedJsonFile:
    """A JSON document changed under an in-process lock plus an flock on a side file.

    A damaged document is salvaged (loom.store.pending_salvage) by `salvage`, the
    damaged bytes are kept beside it and the repaired document is written back, so the
    problem is found, and reported through `take_notes`, once."""

    def __init__(
        self,
        path: Path,
        salvage: Callable[[Any, bytes], Salvage],
        what: Callable[[dict[str, Any]], str],  # what was recovered, in words
    ) -> None:
        self.path = path
        self._salvage = salvage
        self._what = what
        self._thread_lock = threading.RLock()
        self._notes: list[str] = []
        self.lost_something = False

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._thread_lock, open(self.path.with_name(self.path.name + ".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def read(self) -> dict[str, Any]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            self._notes.append(f"could not read {self.path} ({exc.strerror or exc})")
            return {}
        try:
            parsed: Any = json.loads(raw)
        except (ValueError, RecursionError):
            parsed = None
        result = self._salvage(parsed, raw)
        if not result.problems:
            return result.data
        self._repair(raw, result)
        return result.data

    def _repair(self, raw: bytes, result: Salvage) -> None:
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        kept = self.path.with_name(f"{self.path.name}.damaged-{stamp}")
        with contextlib.suppress(OSError):
            kept.write_bytes(raw)
        with contextlib.suppress(OSError):
            self.write(result.data)
        self.lost_something = True
        found = "; ".join(result.problems[:3]) + (" ..." if len(result.problems) > 3 else "")
        self._notes.append(
            f"{self.path} was damaged ({found}); the damaged copy is kept as {kept.name}; "
            f"{self._what(result.data)}"
        )

    def take_notes(self) -> list[str]:
        notes, self._notes = self._notes, []
        return notes

    def write(self, data: dict[str, Any]) -> None:
        atomic_write_bytes(self.path, json.dumps(data, indent=1).encode())


def _queue_recovered(data: dict[str, Any]) -> str:
    ids = [e["thread_id"] for e in data["entries"]]
    shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
    return f"recovered {len(ids)} queued thread(s)" + (f": {shown}" if ids else "")


def _acked_recovered(data: dict[str, Any]) -> str:
    return f"recovered {len(data)} acknowledged version(s)"


class PendingSyncQueue:
    def __init__(self, path: Path) -> None:
        self._file = _LockedJsonFile(path, salvage_queue, _queue_recovered)

    @property
    def path(self) -> Path:
        return self._file.path

    def take_notes(self) -> list[str]:
        """What was wrong with the file and what was recovered (each said once)."""
        return self._file.take_notes()

    def _load(self) -> tuple[int, dict[str, PendingEntry]]:
        data = self._file.read()  # checked and normalised (pending_salvage)
        entries: dict[str, PendingEntry] = {}
        for raw in data.get("entries", []):
            entry = PendingEntry(**{**raw, "operation": SyncOperation(raw["operation"])})
            entries[entry.thread_id] = entry
        return int(data.get("next_seq", 1)), entries

    def _store(self, next_seq: int, entries: dict[str, PendingEntry]) -> None:
        self._file.write({"next_seq": next_seq, "entries": [asdict(e) for e in entries.values()]})

    def enqueue(self, thread_id: str, operation: SyncOperation) -> int:
        """Queue `operation` for a thread (durably); returns the entry's seq."""
        with self._file.locked():
            next_seq, entries = self._load()
            old = entries.get(thread_id)
            entries[thread_id] = PendingEntry(
                thread_id,
                operation,
                next_seq,
                # Keep the failure history so backoff survives new saves.
                retry_count=old.retry_count if old else 0,
                failed_at=old.failed_at if old else None,
                last_error=old.last_error if old else None,
            )
            self._store(next_seq + 1, entries)
            return next_seq

    def entries(self) -> list[PendingEntry]:
        with self._file.locked():
            return sorted(self._load()[1].values(), key=lambda e: e.seq)

    def get(self, thread_id: str) -> PendingEntry | None:
        with self._file.locked():
            return self._load()[1].get(thread_id)

    def remove(self, done: list[tuple[str, int]]) -> int:
        """Remove entries that were pushed, each only if not re-queued since (same seq)."""
        if not done:
            return 0
        with self._file.locked():
            next_seq, entries = self._load()
            removed = 0
            for thread_id, seq in done:
                entry = entries.get(thread_id)
                if entry is not None and entry.seq == seq:
                    del entries[thread_id]
                    removed += 1
            if removed:
                self._store(next_seq, entries)
            return removed

    def record_failure(self, thread_id: str, error: str) -> None:
        with self._file.locked():
            next_seq, entries = self._load()
            entry = entries.get(thread_id)
            if entry is None:
                return
            entry.retry_count += 1
            entry.failed_at = now_iso()
            entry.last_error = error[:500]
            self._store(next_seq, entries)

    def __len__(self) -> int:
        return len(self.entries())

    def last_error(self) -> str | None:
        failed = [e for e in self.entries() if e.last_error and e.failed_at]
        if not failed:
            return None
        return max(failed, key=lambda e: e.failed_at or "").last_error


class AckedVersions:
    """Per thread, the last version the server acknowledged (`state/sync/acked.json`)."""

    def __init__(self, path: Path) -> None:
        self._file = _LockedJsonFile(path, salvage_acked, _acked_recovered)

    def take_notes(self) -> list[str]:
        return self._file.take_notes()

    def get(self, thread_id: str) -> int:
        with self._file.locked():
            return int(self._file.read().get(thread_id, 0))

    def all(self) -> dict[str, int]:
        with self._file.locked():
            return dict(self._file.read())

    def update(self, versions: dict[str, int | None]) -> None:
        """Set versions (None forgets a thread)."""
        if not versions:
            return
        with self._file.locked():
            data = self._file.read()
            for thread_id, version in versions.items():
                if version is None:
                    data.pop(thread_id, None)
                else:
                    data[thread_id] = version
            self._file.write(data)
