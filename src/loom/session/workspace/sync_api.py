"""`Workspace.sync`: log in and out, push and pull now, share, and read the server.

Every method returns plain data for a face to show; problems a person must act on
(not logged in, a refused token, a server that cannot be reached) are `LoomError`s
(`Unavailable` when the server cannot be reached, so a face can fall back to local).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loom.core.errors import BadInput, LoomError, NotFound, Unavailable

if TYPE_CHECKING:
    from loom.paths import LoomPaths
    from loom.session.workspace.threads_api import ThreadsApi

NOT_LOGGED_IN = ("not logged in to a sync server", "run `loom login --server URL --token T`")
VISIBILITIES = ("public", "organization", "private")


class SyncApi:
    def __init__(self, paths: LoomPaths, threads: ThreadsApi) -> None:
        self.paths = paths
        self._threads = threads

    # -- credentials -------------------------------------------------------------------

    def login(self, server: str, token: str) -> dict[str, Any]:
        """Check the token with the server, then remember it; returns who we are."""
        from loom.store.credentials import Credentials, save_credentials
        from loom.store.sync_client import SyncClientError, ThreadSyncClient

        if not server.startswith(("http://", "https://")):
            raise BadInput(f"'{server}' is not a URL", "use e.g. http://host:8080")
        with ThreadSyncClient(server, token.strip()) as client:
            try:
                who = client.whoami()
            except SyncClientError as exc:
                raise LoomError(f"login failed: {exc}") from exc
        creds = Credentials(server.rstrip("/"), token.strip(), who.get("user"), who.get("org"))
        path = save_credentials(self.paths, creds)
        return {
            "server": creds.server_url,
            "user": creds.user,
            "org": creds.org,
            "credentials_file": str(path),
        }

    def logout(self) -> dict[str, Any]:
        """Forget the credentials; queued changes stay for the next login."""
        from loom.store.credentials import delete_credentials
        from loom.store.pending import PendingSyncQueue

        removed = delete_credentials(self.paths)
        pending = len(PendingSyncQueue(self.paths.pending_sync_file))
        return {"logged_out": removed, "pending": pending}

    # -- pushing and pulling -----------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """server, pending, last_error (LoomError when not logged in)."""
        store = self._open()
        try:
            return store.status()
        finally:
            store.close()

    def push_existing(self) -> int:
        """Queue every non-private local thread the server does not have (threads made
        before `loom login`); returns how many. `sync_now` pushes them."""
        from loom.store.sync_backlog import queue_existing

        store = self._open()
        try:
            return len(queue_existing(store.local, store.queue, store.acked))
        finally:
            store.close()

    def not_on_server(self) -> int:
        """How many non-private local threads the server has never acknowledged and
        nothing queues (0 when not logged in)."""
        from loom.store.sync_backlog import not_on_server

        try:
            store = self._open()
        except LoomError:
            return 0
        try:
            return len(not_on_server(store.local, store.queue, store.acked))
        finally:
            store.close()

    def sync_now(self, push_existing: bool = False) -> dict[str, Any]:
        """Push queued changes, pull what changed on the server; the status after it.
        `error` says why it is incomplete (None when it is not); `not_on_server` counts
        local threads the server lacks that nothing queues; `repaired` says what was
        wrong with the sync bookkeeping files (and was repaired)."""
        from loom.store.sync_backlog import not_on_server, queue_existing
        from loom.store.sync_client import SyncClientError

        store = self._open()
        try:
            queued = queue_existing(store.local, store.queue, store.acked) if push_existing else []
            pushed = store.drain()
            pull = None
            auth = [n.message for n in pushed.notices if n.kind == "auth"]
            error = pushed.unavailable or (auth[0] if auth else None)
            if error is None:
                try:
                    pull = store.pull()
                except SyncClientError as exc:
                    error = str(exc)
            status = store.status()
            missing = len(not_on_server(store.local, store.queue, store.acked))
        finally:
            store.close()
        return {
            **status,
            "queued_existing": len(queued),
            "not_on_server": missing,
            "repaired": pushed.bookkeeping,
            "pushed": pushed.pushed,
            "failed": pushed.failed,
            "pulled": pull.pulled if pull else 0,
            "merged": pull.merged if pull else 0,
            "conflicts": [n.message for n in pushed.notices if n.kind == "conflict"],
            "error": error,
        }

    def share(
        self, ref: str, visibility: str | None = None, support: bool | None = None
    ) -> dict[str, Any]:
        """Change who may read a thread; saved locally first, then sent when logged in.
        The result has `synced`, maybe `share_url` or `error`, and a `note` for people."""
        from loom.core.thread import ThreadVisibility
        from loom.store.factory import open_syncing_store
        from loom.store.sync_client import SyncClientError

        if visibility is not None and visibility not in VISIBILITIES:
            raise BadInput(
                f"--visibility must be public, organization or private, not '{visibility}'"
            )
        if visibility is None and support is None:
            raise BadInput(
                "say what to change: --visibility public|organization|private and/or "
                "--support/--no-support"
            )
        local = self._threads.local
        try:
            thread_id = local.resolve(ref)
        except LookupError as exc:
            raise NotFound(str(exc)) from exc
        thread = local.load(thread_id)
        if thread is None:
            raise NotFound(f"no thread '{ref}'", "run `loom list` to see thread ids")
        if thread.is_private:
            raise BadInput(
                f"thread {thread.id} is private (local-only) and never leaves this machine",
                "it cannot be shared",
            )
        if visibility is not None:
            thread.visibility = ThreadVisibility(visibility)
        if support is not None:
            thread.is_shared_with_support = support
        thread.touch()
        data: dict[str, Any] = {
            "id": thread.id,
            "visibility": str(thread.visibility),
            "is_shared_with_support": thread.is_shared_with_support,
        }
        store = open_syncing_store(self.paths, background=False)
        if store is None:
            local.save(thread)
            data["synced"] = False
            data["note"] = (
                "saved locally; not logged in, so nothing changes on a server until `loom login`"
            )
            return data
        try:
            store.save_and_sync(thread)
            info = store.client.share(thread.id)
            data.update(synced=True, share_url=info.get("share_url"), note="the server has it")
        except SyncClientError as exc:
            data.update(
                synced=False,
                error=str(exc),
                note=f"saved locally and queued; the server did not take it yet ({exc})",
            )
        finally:
            store.close()
        return data

    # -- the server's threads ------------------------------------------------------------

    def remote_list(self, limit: int = 50) -> list[dict[str, Any]]:
        """Threads on the server this user may read, newest activity first."""
        from loom.store.sync_client import SyncClientError, SyncUnavailable

        with self._client() as client:
            try:
                rows, _cursor = client.list_page(limit)
            except SyncUnavailable as exc:
                raise Unavailable(str(exc)) from exc
            except SyncClientError as exc:
                raise LoomError(str(exc)) from exc
        return rows

    def remote_search(self, query: str, limit: int = 20) -> list[dict[str, Any]]:
        """Full-text search on the server (Unavailable when it cannot be reached)."""
        from loom.store.sync_client import SyncClientError, SyncUnavailable

        with self._client() as client:
            try:
                return client.search(query, limit)
            except SyncUnavailable as exc:
                raise Unavailable(str(exc)) from exc
            except SyncClientError as exc:
                raise LoomError(str(exc)) from exc

    # -- helpers -------------------------------------------------------------------------

    def _credentials(self) -> Any:
        from loom.store.credentials import CredentialsError, load_credentials

        try:
            creds = load_credentials(self.paths)
        except CredentialsError as exc:
            raise LoomError(str(exc)) from exc
        if creds is None:
            raise LoomError(*NOT_LOGGED_IN)
        return creds

    def _client(self) -> Any:
        from loom.store.sync_client import ThreadSyncClient

        creds = self._credentials()
        return ThreadSyncClient(creds.server_url, creds.token)

    def _open(self) -> Any:
        from loom.store.factory import open_syncing_store

        self._credentials()
        store = open_syncing_store(self.paths, background=False)
        if store is None:  # the credentials went away in between
            raise LoomError(*NOT_LOGGED_IN)
        return store
