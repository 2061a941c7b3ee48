"""PendingSyncQueue and AckedVersions: durable, replay-safe bookkeeping."""

from __future__ import annotations

import json
from pathlib import Path

from loom.store.pending import AckedVersions, PendingSyncQueue, SyncOperation


def test_entries_are_on_disk_when_enqueue_returns(tmp_path: Path) -> None:
    path = tmp_path / "sync" / "pending.json"
    queue = PendingSyncQueue(path)
    queue.enqueue("T-a", SyncOperation.UPSERT)
    data = json.loads(path.read_text())
    entry = data["entries"][0]
    assert entry["thread_id"] == "T-a" and entry["operation"] == "Upsert"
    assert {"failed_at", "retry_count", "last_error"} <= entry.keys()
    # A second process (a fresh object) sees the same queue.
    assert [e.thread_id for e in PendingSyncQueue(path).entries()] == ["T-a"]


def test_a_save_during_a_push_stays_queued(tmp_path: Path) -> None:
    queue = PendingSyncQueue(tmp_path / "pending.json")
    first = queue.enqueue("T-a", SyncOperation.UPSERT)
    second = queue.enqueue("T-a", SyncOperation.UPSERT)  # saved again while pushing
    assert queue.remove([("T-a", first)]) == 0  # the push of the older copy
    assert [e.seq for e in queue.entries()] == [second]
    assert queue.remove([("T-a", second)]) == 1
    assert len(queue) == 0


def test_the_newest_operation_wins_and_failures_are_kept(tmp_path: Path) -> None:
    queue = PendingSyncQueue(tmp_path / "pending.json")
    queue.enqueue("T-a", SyncOperation.UPSERT)
    queue.record_failure("T-a", "cannot reach the sync server")
    queue.enqueue("T-a", SyncOperation.DELETE)
    (entry,) = queue.entries()
    assert entry.operation is SyncOperation.DELETE
    assert entry.retry_count == 1 and entry.last_error == "cannot reach the sync server"
    assert queue.last_error() == "cannot reach the sync server"


def test_backoff_grows_with_retries(tmp_path: Path) -> None:
    queue = PendingSyncQueue(tmp_path / "pending.json")
    queue.enqueue("T-a", SyncOperation.UPSERT)
    for _ in range(4):
        queue.record_failure("T-a", "down")
    (entry,) = queue.entries()
    assert entry.due_in(entry.failed_at or "", base=1.0, cap=300) == 8.0
    assert entry.due_in(entry.failed_at or "", base=1.0, cap=5) == 5.0


def test_a_damaged_queue_is_set_aside_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "pending.json"
    path.write_text("{not json")
    queue = PendingSyncQueue(path)
    assert queue.entries() == []
    (kept,) = tmp_path.glob("pending.json.damaged-*")
    assert kept.read_text() == "{not json"
    (note,) = queue.take_notes()
    assert "pending.json was damaged (not valid JSON)" in note and kept.name in note
    assert queue.take_notes() == []  # said once
    queue.enqueue("T-b", SyncOperation.UPSERT)
    assert len(queue) == 1


def test_acked_versions(tmp_path: Path) -> None:
    acked = AckedVersions(tmp_path / "acked.json")
    assert acked.get("T-a") == 0
    acked.update({"T-a": 3, "T-b": 5})
    acked.update({"T-b": None})
    assert AckedVersions(tmp_path / "acked.json").all() == {"T-a": 3}
