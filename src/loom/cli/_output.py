"""Output helpers shared by the sync and server commands: errors, JSON or human text."""

from __future__ import annotations

import json
from typing import Any, NoReturn

import typer


def fail(message: str, as_json: bool = False) -> NoReturn:
    """Print an error (as {"error": ...} with --json) and exit 1."""
    if as_json:
        typer.echo(json.dumps({"error": message}))
    else:
        typer.secho(f"error: {message}", err=True, fg="red")
    raise typer.Exit(1)


def emit(data: dict[str, Any], human: str, as_json: bool) -> None:
    typer.echo(json.dumps(data) if as_json else human)
