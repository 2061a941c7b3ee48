"""`loom login`, `loom logout`, `loom sync` and `loom share`."""

from __future__ import annotations

import json
from typing import Any

import typer

from loom.cli._output import fail

JsonOpt = typer.Option(False, "--json", help="Print machine-readable JSON.")


def register(app: typer.Typer) -> None:
    app.command("login")(login)
    app.command("logout")(logout)
    app.command("sync")(sync)
    app.command("share")(share)


def _paths() -> Any:
    from loom.paths import LoomPaths

    return LoomPaths.from_env()


def login(
    server: str = typer.Option(..., "--server", help="The sync server's URL."),
    token: str = typer.Option(
        ..., "--token", prompt=True, hide_input=True, help="API token from the server admin."
    ),
    as_json: bool = JsonOpt,
) -> None:
    """Connect this machine to a sync server (checks the token first)."""
    from loom.store.credentials import Credentials, save_credentials
    from loom.store.sync_client import SyncClientError, ThreadSyncClient

    if not server.startswith(("http://", "https://")):
        fail(f"'{server}' is not a URL; use e.g. http://host:8080", as_json)
    with ThreadSyncClient(server, token.strip()) as client:
        try:
            who = client.whoami()
        except SyncClientError as exc:
            fail(f"login failed: {exc}", as_json)
    creds = Credentials(server.rstrip("/"), token.strip(), who.get("user"), who.get("org"))
    path = save_credentials(_paths(), creds)
    data = {
        "server": creds.server_url,
        "user": creds.user,
        "org": creds.org,
        "credentials_file": str(path),
    }
    typer.echo(
        json.dumps(data)
        if as_json
        else f"logged in to {creds.server_url} as {creds.user} ({creds.org}); "
        "non-private threads now sync in the background"
    )


def logout(as_json: bool = JsonOpt) -> None:
    """Forget the sync server credentials (queued changes stay for the next login)."""
    from loom.store.credentials import delete_credentials
    from loom.store.pending import PendingSyncQueue

    paths = _paths()
    removed = delete_credentials(paths)
    pending = len(PendingSyncQueue(paths.pending_sync_file))
    data = {"logged_out": removed, "pending": pending}
    if as_json:
        typer.echo(json.dumps(data))
    elif removed:
        typer.echo(f"logged out; {pending} change(s) stay queued for the next login")
    else:
        typer.echo("not logged in")


def _open_store(as_json: bool) -> Any:
    from loom.store.credentials import CredentialsError, load_credentials
    from loom.store.factory import open_syncing_store

    paths = _paths()
    try:
        if load_credentials(paths) is None:
            fail("not logged in to a sync server; run `loom login --server URL --token T`", as_json)
    except CredentialsError as exc:
        fail(str(exc), as_json)
    return open_syncing_store(paths, background=False)


def sync(as_json: bool = JsonOpt) -> None:
    """Push queued changes, pull threads changed on the server, and show the status."""
    from loom.store.sync_client import SyncClientError

    store = _open_store(as_json)
    try:
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
    finally:
        store.close()
    data = {
        **status,
        "pushed": pushed.pushed,
        "failed": pushed.failed,
        "pulled": pull.pulled if pull else 0,
        "merged": pull.merged if pull else 0,
        "conflicts": [n.message for n in pushed.notices if n.kind == "conflict"],
        "error": error,
    }
    if as_json:
        typer.echo(json.dumps(data))
    else:
        typer.echo(f"server  {data['server']}")
        typer.echo(
            f"pushed  {data['pushed']}   pulled {data['pulled']}   merged {data['merged']}"
            f"   failed {data['failed']}"
        )
        for message in data["conflicts"]:
            typer.echo(f"merged: {message}")
        typer.echo(f"pending {data['pending']}")
        if data["last_error"]:
            typer.echo(f"last error: {data['last_error']}")
        if error:
            typer.secho(f"sync incomplete: {error}", err=True, fg="yellow")
    if error:
        raise typer.Exit(1)


def _resolve(local: Any, ref: str) -> str:
    resolver = getattr(local, "resolve", None)
    if resolver is None:
        return ref
    found = resolver(ref)
    return found if isinstance(found, str) else found.id


def share(
    thread_ref: str = typer.Argument(..., metavar="ID", help="Thread id (or a unique prefix)."),
    visibility: str = typer.Option(
        None, "--visibility", help="public | organization | private (synced, owner only)."
    ),
    support: bool = typer.Option(
        None, "--support/--no-support", help="Let the support team read it."
    ),
    as_json: bool = JsonOpt,
) -> None:
    """Change who may read a thread on the sync server."""
    from loom.core.thread import ThreadVisibility
    from loom.store.local import LocalThreadStore
    from loom.store.sync_client import SyncClientError

    if visibility is not None and visibility not in {v.value for v in ThreadVisibility}:
        fail(f"--visibility must be public, organization or private, not '{visibility}'", as_json)
    if visibility is None and support is None:
        fail(
            "say what to change: --visibility public|organization|private and/or "
            "--support/--no-support",
            as_json,
        )
    paths = _paths()
    local = LocalThreadStore(paths)
    try:
        thread_id = _resolve(local, thread_ref)
    except LookupError as exc:
        fail(str(exc), as_json)
    thread = local.load(thread_id)
    if thread is None:
        fail(f"no thread '{thread_ref}'; run `loom list` to see thread ids", as_json)
    if thread.is_private:
        fail(
            f"thread {thread.id} is private (local-only) and never leaves this machine; "
            "it cannot be shared",
            as_json,
        )
    if visibility is not None:
        thread.visibility = ThreadVisibility(visibility)
    if support is not None:
        thread.is_shared_with_support = support
    thread.touch()
    store = _open_store_or_none(paths)
    data: dict[str, Any] = {
        "id": thread.id,
        "visibility": str(thread.visibility),
        "is_shared_with_support": thread.is_shared_with_support,
    }
    if store is None:
        local.save(thread)
        data["synced"] = False
        note = "saved locally; not logged in, so nothing changes on a server until `loom login`"
    else:
        try:
            store.save_and_sync(thread)
            info = store.client.share(thread.id)
            data.update(synced=True, share_url=info.get("share_url"))
            note = "the server has it"
        except SyncClientError as exc:
            data.update(synced=False, error=str(exc))
            note = f"saved locally and queued; the server did not take it yet ({exc})"
        finally:
            store.close()
    if as_json:
        typer.echo(json.dumps(data))
        return
    who = {
        "public": "anyone signed in to the server (and anyone with the link)",
        "organization": "your organization",
        "private": "only you",
    }[data["visibility"]]
    typer.echo(
        f"{thread.id} is readable by {who}"
        + ("; support may read it" if thread.is_shared_with_support else "")
    )
    if data.get("share_url"):
        typer.echo(f"link: {data['share_url']}")
    typer.echo(note)


def _open_store_or_none(paths: Any) -> Any:
    from loom.store.factory import open_syncing_store

    return open_syncing_store(paths, background=False)
