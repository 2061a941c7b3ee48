"""open_thread_store: the store every face uses.

Logged in (`loom login` wrote credentials): a SyncingThreadStore over the local store,
whose background thread also retries whatever an earlier run left queued. Otherwise the
LocalThreadStore alone. Sync problems never stop the local store from opening.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from loom.paths import LoomPaths

log = logging.getLogger(__name__)


def acked_versions_file(paths: LoomPaths) -> Any:
    return paths.pending_sync_file.with_name("acked.json")


def open_thread_store(
    paths: LoomPaths | None = None,
    config: Any = None,
    *,
    on_event: Callable[[Any], None] | None = None,
    background: bool = True,
) -> Any:
    """A ThreadStore: syncing when logged in, else local only."""
    from loom.store.local import LocalThreadStore

    paths = paths or LoomPaths.from_env()
    local = LocalThreadStore(paths)
    syncing = open_syncing_store(
        paths, config, local=local, on_event=on_event, background=background
    )
    return syncing if syncing is not None else local


def _project_chose(config: Any) -> bool:
    """Whether the sync server in effect is the one a trusted project file set (then it
    gets that project's threads only, not the person's whole queue)."""
    configured = getattr(getattr(config, "sync", None), "server_url", None)
    trust = getattr(config, "trust", None)
    if not configured or trust is None or not trust.applies:
        return False
    return any(i.key == "sync.server_url" and i.value == configured for i in trust.items)


def open_syncing_store(
    paths: LoomPaths,
    config: Any = None,
    *,
    local: Any = None,
    on_event: Callable[[Any], None] | None = None,
    background: bool = True,
) -> Any:
    """The SyncingThreadStore for the logged-in server, or None when not logged in."""
    from loom.store.credentials import CredentialsError, load_credentials

    try:
        creds = load_credentials(paths)
    except CredentialsError as exc:
        log.warning("sync disabled: %s", exc)
        return None
    if creds is None:
        return None
    from loom.store.local import LocalThreadStore
    from loom.store.pending import AckedVersions, PendingSyncQueue
    from loom.store.sync_client import ThreadSyncClient
    from loom.store.syncing import SyncingThreadStore

    configured = getattr(getattr(config, "sync", None), "server_url", None)
    client = ThreadSyncClient(configured or creds.server_url, creds.token)
    project_root = getattr(config, "project_root", None) if _project_chose(config) else None
    return SyncingThreadStore(
        local if local is not None else LocalThreadStore(paths),
        client,
        PendingSyncQueue(paths.pending_sync_file),
        AckedVersions(acked_versions_file(paths)),
        on_event=on_event,
        background=background,
        only_project=project_root,
    )
