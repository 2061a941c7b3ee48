"""What the server does not have yet, worked out by comparing local threads with the
versions it acknowledged (`acked.json`) and the queue.

Used when the bookkeeping was damaged (re-queue what may have been lost), by `loom
sync` (how many local threads are not on the server) and by `loom login
--push-existing` (queue threads made before logging in). Private threads never count.
"""

from __future__ import annotations

import os
from typing import Any

from loom.core.clock import parse_iso
from loom.store.pending import AckedVersions, PendingSyncQueue, SyncOperation


def _local_threads(local: Any) -> list[Any]:
    return [s for s in local.list(limit=1 << 40) if not s.is_private]


def not_on_server(local: Any, queue: PendingSyncQueue, acked: AckedVersions) -> list[str]:
    """Non-private local threads the server never acknowledged and nothing queues."""
    versions = acked.all()
    queued = {e.thread_id for e in queue.entries()}
    return [s.id for s in _local_threads(local) if s.id not in versions and s.id not in queued]


def queue_existing(local: Any, queue: PendingSyncQueue, acked: AckedVersions) -> list[str]:
    """Queue every thread `not_on_server` lists; returns their ids."""
    ids = not_on_server(local, queue, acked)
    for thread_id in ids:
        queue.enqueue(thread_id, SyncOperation.UPSERT)
    return ids


def requeue_unacknowledged(
    local: Any, queue: PendingSyncQueue, acked: AckedVersions, since: float | None
) -> list[str]:
    """After damage: queue threads whose newest version the server has not acknowledged.

    A thread the server never acknowledged is queued only if it changed after `since`
    (when this machine logged in: older ones were never meant to be pushed, unless the
    person asks with `loom login --push-existing`). A repeat push is harmless: the
    server answers 409 with the same copy and the client sees it is in sync."""
    versions = acked.all()
    queued = {e.thread_id for e in queue.entries()}
    again = []
    for summary in _local_threads(local):
        if summary.id in queued:
            continue
        known = versions.get(summary.id)
        if known is not None:
            stale = known < summary.version
        else:
            stale = since is None or _after(summary.last_activity_at, since)
        if stale:
            queue.enqueue(summary.id, SyncOperation.UPSERT)
            again.append(summary.id)
    return again


def login_time(paths: Any) -> float | None:
    """When this machine logged in (the credentials file's time), if known."""
    from loom.store.credentials import credentials_path

    try:
        return os.stat(credentials_path(paths)).st_mtime
    except OSError:
        return None


def _after(timestamp: str, since: float) -> bool:
    try:
        return parse_iso(timestamp).timestamp() >= since
    except (ValueError, OverflowError):
        return True
