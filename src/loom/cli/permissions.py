"""`loom permissions list|revoke`: the `allow_always` grants saved in loom.db."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from loom.cli._output import fail, person_errors

permissions_app = typer.Typer(
    help="Saved 'allow always' permission grants: list them, revoke them.",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    app.add_typer(permissions_app, name="permissions")


def _grants() -> Any:
    from loom.session import Workspace

    return Workspace.for_data().grants


def _errors() -> Any:
    """One line on stderr: exit code 2 for bad input, 1 for the rest."""
    return person_errors(bad_input_code=2)


@permissions_app.command("list")
def list_command(
    as_json: bool = typer.Option(False, "--json", help="Print the grants as JSON."),
    project: Path = typer.Option(
        None, "--project", "-p", help="Only this project's grants (default: every project)."
    ),
) -> None:
    """Show saved grants: id, tool, scope, project, created."""
    with _errors():
        grants = _grants().list(project)
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
        where = f" for {project.resolve()}" if project is not None else ""
        typer.echo(
            f"No saved permission grants{where}. They are made when you answer "
            "'allow always' to a permission prompt."
        )
        return
    from rich.table import Table
    from rich.text import Text

    from loom.cli.terminal import SafeConsole
    from loom.core.clock import humanize_age

    table = Table(box=None, header_style="bold")
    for column in ("id", "tool", "scope", "project", "created"):
        table.add_column(column, overflow="fold")
    for g in grants:
        table.add_row(  # Text: a command's "[bold]" is not Rich markup
            str(g.id), Text(g.tool), Text(g.describe()), Text(g.project_root),
            humanize_age(g.created_at),
        )  # fmt: skip
    SafeConsole().print(table)
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
        fail("give either a grant ID or --all (see `loom permissions list`)", code=2)
    grants = _grants()
    if not grants.database.exists():
        typer.echo("No saved permission grants; nothing to revoke.")
        if grant_id is not None:
            raise typer.Exit(1)
        return
    with _errors():
        if all_grants:
            count = grants.revoke_all(project)
            typer.echo(f"Revoked {count} grant{'s' if count != 1 else ''}.")
            return
        grant = grants.revoke(grant_id)
    typer.echo(
        f"Revoked grant {grant.id}: {grant.tool} {grant.describe()} in {grant.project_root}."
    )
