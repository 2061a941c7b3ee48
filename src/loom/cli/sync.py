"""`loom login`, `loom logout`, `loom sync` and `loom share`."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import typer

from loom.cli._output import person_errors, say
from loom.core.text import visible_block

if TYPE_CHECKING:
    from loom.session import Workspace

JsonOpt = typer.Option(False, "--json", help="Print machine-readable JSON.")


def register(app: typer.Typer) -> None:
    app.command("login")(login)
    app.command("logout")(logout)
    app.command("sync")(sync)
    app.command("share")(share)


def _workspace() -> Workspace:
    from loom.session import Workspace

    return Workspace.for_data()


def login(
    server: str = typer.Option(..., "--server", help="The sync server's URL."),
    token: str = typer.Option(
        ..., "--token", prompt=True, hide_input=True, help="API token from the server admin."
    ),
    push_existing: bool = typer.Option(
        None,
        "--push-existing/--no-push-existing",
        help="Also queue the non-private threads made before this login (asked when interactive).",
    ),
    as_json: bool = JsonOpt,
) -> None:
    """Connect this machine to a sync server (checks the token first)."""
    workspace = _workspace()
    with person_errors(as_json):
        data = workspace.sync.login(server, token)
        existing = workspace.sync.not_on_server()
        if push_existing is None and existing and not as_json and sys.stdin.isatty():
            push_existing = typer.confirm(
                f"{existing} existing non-private thread(s) are not on the server. Push them?",
                default=False,
            )
        data["queued_existing"] = workspace.sync.push_existing() if push_existing else 0
        data["not_on_server"] = existing - data["queued_existing"]
    if as_json:
        typer.echo(json.dumps(data))
        return
    say(
        f"logged in to {data['server']} as {data['user']} ({data['org']}); "
        "non-private threads now sync in the background"
    )
    if data["queued_existing"]:
        say(
            f"queued {data['queued_existing']} existing thread(s); they go up in the "
            "background or with `loom sync`"
        )
    elif data["not_on_server"]:
        say(
            f"{data['not_on_server']} existing thread(s) made before this login are not on "
            "the server; `loom sync --push-existing` sends them"
        )


def logout(as_json: bool = JsonOpt) -> None:
    """Forget the sync server credentials (queued changes stay for the next login)."""
    data = _workspace().sync.logout()
    if as_json:
        typer.echo(json.dumps(data))
    elif data["logged_out"]:
        say(f"logged out; {data['pending']} change(s) stay queued for the next login")
    else:
        say("not logged in")


def sync(
    push_existing: bool = typer.Option(
        False, "--push-existing", help="Also push the local threads the server never had."
    ),
    as_json: bool = JsonOpt,
) -> None:
    """Push queued changes, pull threads changed on the server, and show the status."""
    with person_errors(as_json):
        data = _workspace().sync.sync_now(push_existing)
    error = data["error"]
    if as_json:
        typer.echo(json.dumps(data))
    else:
        for note in data["repaired"]:
            typer.secho(visible_block(f"repaired: {note}"), err=True, fg="yellow")
        say(f"server  {data['server']}")
        say(
            f"pushed  {data['pushed']}   pulled {data['pulled']}   merged {data['merged']}"
            f"   failed {data['failed']}"
        )
        for message in data["conflicts"]:
            say(f"merged: {message}")
        say(f"pending {data['pending']}")
        if data["queued_existing"]:
            say(f"queued  {data['queued_existing']} existing thread(s) the server lacked")
        if data["not_on_server"]:
            say(
                f"not on the server: {data['not_on_server']} local thread(s) (made before "
                "`loom login`); `loom sync --push-existing` sends them"
            )
        if data["last_error"]:
            say(f"last error: {data['last_error']}")
        if error:
            typer.secho(visible_block(f"sync incomplete: {error}"), err=True, fg="yellow")
    if error:
        raise typer.Exit(1)


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
    with person_errors(as_json):
        data = _workspace().sync.share(thread_ref, visibility, support)
    note = data.pop("note")
    if as_json:
        typer.echo(json.dumps(data))
        return
    who = {
        "public": "anyone signed in to the server (and anyone with the link)",
        "organization": "your organization",
        "private": "only you",
    }[data["visibility"]]
    say(
        f"{data['id']} is readable by {who}"
        + ("; support may read it" if data["is_shared_with_support"] else "")
    )
    if data.get("share_url"):
        say(f"link: {data['share_url']}")
    say(note)
