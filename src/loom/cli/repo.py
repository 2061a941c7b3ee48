"""`loom map` and `loom index`: the repo map and the file/symbol index, for people."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    app.command("map", help="Show the ranked repo map Loom gives the model.")(map_command)
    app.command("index", help="Index the project's files and symbols (with progress).")(
        index_command
    )


def map_command(
    tokens: int = typer.Option(None, "--tokens", "-t", min=1,
                               help="Token budget (default: config repo.map_tokens)."),
    focus: list[str] = typer.Option([], "--focus", "-f", help=(
        "A file in the conversation: ranks what it uses higher (its own definitions are "
        "left out, the model already sees it). Repeatable.")),
    mention: list[str] = typer.Option([], "--mention", "-m",
                                      help="An identifier the user mentioned. Repeatable."),
    root: Path = typer.Option(None, "--root", help="Project folder (default: this one)."),
) -> None:
    from loom.cli.repo_fast import run_map

    raise typer.Exit(run_map(tokens, focus, mention, root))


def index_command(
    root: Path = typer.Option(None, "--root", help="Project folder (default: this one)."),
) -> None:
    from loom.cli.repo_fast import run_index

    raise typer.Exit(run_index(root))
