"""Sync in tests: client machines (each its own Loom folders and store) against a real
`loom server` process on loopback."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import httpx

from loom.paths import LoomPaths
from loom.store.local import LocalThreadStore
from loom.store.pending import AckedVersions, PendingSyncQueue
from loom.store.sync_client import ThreadSyncClient
from loom.store.syncing import SyncingThreadStore, SyncNotice
from tests.support.server import LiveServer, add_user, unique


class RecordingTransport(httpx.HTTPTransport):
    """A real HTTP transport that also remembers every request it sends."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[httpx.Request] = []
        self.statuses: list[int] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        response = super().handle_request(request)
        self.statuses.append(response.status_code)
        return response


@dataclass
class Server:
    live: LiveServer
    database_url: str

    def token(self, org: str = "acme") -> str:
        return add_user(self.database_url, unique("user"), org)

    @property
    def url(self) -> str:
        return self.live.url


@dataclass
class Machine:
    """One client machine: its own LOOM paths, store, queue and recorded requests."""

    paths: LoomPaths
    store: SyncingThreadStore
    transport: RecordingTransport
    notices: list[SyncNotice]


def make_machine(
    root: Path, url: str, token: str, *, background: bool = False, max_backoff: float = 0.5
) -> Machine:
    paths = LoomPaths(root / "data", root / "state", root / "cache", root / "config")
    transport = RecordingTransport()
    notices: list[SyncNotice] = []
    store = SyncingThreadStore(
        LocalThreadStore(paths),
        ThreadSyncClient(url, token, transport=transport, timeout=5),
        PendingSyncQueue(paths.pending_sync_file),
        AckedVersions(paths.pending_sync_file.with_name("acked.json")),
        on_event=notices.append,
        background=background,
        max_backoff=max_backoff,
    )
    return Machine(paths, store, transport, notices)
