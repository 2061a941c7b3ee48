"""How every command reports: one `loom: error: ...` line (or {"error": ...} with --json)
for an error a person must act on, and JSON or human text for results."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import typer

from loom.cli.errors import ERROR_PREFIX, error_line

__all__ = ["ERROR_PREFIX", "emit", "error_line", "fail", "person_errors", "say", "warn"]


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


def say(text: str, err: bool = False) -> None:
    """Print lines for a person that hold text from files, a repository or a model (a
    key's name, a path, a warning): newlines stay, escape sequences are shown as text."""
    from loom.core.text import visible_block

    typer.echo(visible_block(text), err=err)


def warn(line: str) -> None:
    """One line on stderr holding text from files or a repository (an unknown key, a
    skipped agent file): every control character in it, a newline too, is shown."""
    from loom.core.text import visible

    typer.echo(visible(line), err=True)


def emit(data: dict[str, Any], human: str, as_json: bool) -> None:
    from loom.core.text import visible_block

    typer.echo(json.dumps(data) if as_json else visible_block(human))
