"""`loom permissions list|revoke`: the `allow_always` grants saved in loom.db."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import typer

permissions_app = typer.Typer(
    help="Saved 'allow always' permission grants: list them, revoke them.",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    app.add_typer(permissions_app, name="permissions")


def _store(project: Path | None) -> Any:
    from loom.permissions import GrantStore

    if project is not None and not project.is_dir():
        typer.echo(
            f"error: {project} is not a folder; pass a project folder to --project.", err=True
        )
        raise typer.Exit(2)
    return GrantStore(project)


def _fail_database(store: Any, exc: Exception) -> typer.Exit:
    typer.echo(
        f"error: cannot read the permission grants in {store.database}: {exc}. "
        "Check that the file is readable (or move it away to start with no grants).",
        err=True,
    )
    return typer.Exit(1)


@permissions_app.command("list")
def list_command(
    as_json: bool = typer.Option(False, "--json", help="Print the grants as JSON."),
    project: Path = typer.Option(
        None, "--project", "-p", help="Only this project's grants (default: every project)."
    ),
) -> None:
    """Show saved grants: id, tool, scope, project, created."""
    store = _store(project)
    try:
        grants = store.list() if store.database.exists() else []
    except (sqlite3.Error, OSError) as exc:
        raise _fail_database(store, exc) from exc
    if as_json:
        rows = [
            {
                "id": g.id,
                "tool": g.tool,
                "scope_kind": g.scope_kind,
                "scope": g.scope,
                "project": g.project_root,
                "created_at": g.created_at,
            }
            for g in grants
        ]
        typer.echo(json.dumps(rows, indent=2))
        return
    if not grants:
        where = f" for {store.project_root}" if store.project_root else ""
        typer.echo(
            f"No saved permission grants{where}. They are made when you answer "
            "'allow always' to a permission prompt."
        )
        return
    from rich.console import Console
    from rich.table import Table

    from loom.core.clock import humanize_age

    table = Table(box=None, header_style="bold")
    for column in ("id", "tool", "scope", "project", "created"):
        table.add_column(column, overflow="fold")
    for g in grants:
        table.add_row(str(g.id), g.tool, g.describe(), g.project_root, humanize_age(g.created_at))
    Console().print(table)
    typer.echo("Revoke one with `loom permissions revoke ID`, or all with --all.")


@permissions_app.command("revoke")
def revoke_command(
    grant_id: str = typer.Argument(None, metavar="ID", help="The grant's id (see `list`)."),
    all_grants: bool = typer.Option(False, "--all", help="Revoke every saved grant."),
    project: Path = typer.Option(
        None, "--project", "-p", help="With --all: only this project's grants."
    ),
) -> None:
    """Revoke one grant by id, or all of them with --all."""
    if all_grants == (grant_id is not None):
        typer.echo(
            "error: give either a grant ID or --all (see `loom permissions list`).", err=True
        )
        raise typer.Exit(2)
    store = _store(project)
    if not store.database.exists():
        typer.echo("No saved permission grants; nothing to revoke.")
        if grant_id is not None:
            raise typer.Exit(1)
        return
    try:
        if all_grants:
            count = store.revoke_all()
            typer.echo(f"Revoked {count} grant{'s' if count != 1 else ''}.")
            return
        assert grant_id is not None
        if not grant_id.strip().isdigit():
            typer.echo(
                f"error: {grant_id!r} is not a grant id; ids are numbers, shown by "
                "`loom permissions list`.",
                err=True,
            )
            raise typer.Exit(2)
        grant = store.get(int(grant_id))
        if grant is None or not store.revoke(grant.id):
            typer.echo(
                f"error: no saved grant has id {grant_id.strip()}; run "
                "`loom permissions list` to see the ids.",
                err=True,
            )
            raise typer.Exit(1)
    except (sqlite3.Error, OSError) as exc:
        raise _fail_database(store, exc) from exc
    typer.echo(
        f"Revoked grant {grant.id}: {grant.tool} {grant.describe()} in {grant.project_root}."
    )
