"""How every command reports: one `loom: error: ...` line (or {"error": ...} with --json)
for an error a person must act on, and JSON or human text for results."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import typer

ERROR_PREFIX = "loom: error: "


def error_line(message: object) -> str:
    """The one line an error is shown as, wherever it comes from."""
    return ERROR_PREFIX + " ".join(str(message).split())


def fail(message: object, as_json: bool = False, code: int = 1) -> NoReturn:
    """Print an error (as {"error": ...} with --json) and exit with `code`."""
    if as_json:
        typer.echo(json.dumps({"error": str(message)}))
    else:
        typer.secho(error_line(message), err=True, fg="red")
    raise typer.Exit(code)


@contextmanager
def person_errors(as_json: bool = False, bad_input_code: int = 1) -> Iterator[None]:
    """A LoomError raised in the block becomes `fail(...)`: exit 1, or `bad_input_code`
    for BadInput (commands whose usage errors exit 2)."""
    from loom.session import BadInput, LoomError

    try:
        yield
    except LoomError as exc:
        fail(exc, as_json, bad_input_code if isinstance(exc, BadInput) else 1)


def emit(data: dict[str, Any], human: str, as_json: bool) -> None:
    typer.echo(json.dumps(data) if as_json else human)
