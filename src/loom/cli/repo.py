"""`loom map` and `loom index`: the repo map and the file/symbol index, for people."""

from __future__ import annotations

from pathlib import Path

import typer

from loom.cli._output import fail


def register(app: typer.Typer) -> None:
    app.command("map", help="Show the ranked repo map Loom gives the model.")(map_command)
    app.command(
        "diagnostics",
        help="Type and compile errors of files, from their language "
        "servers (as the agent's lsp_diagnostics tool sees them).",
    )(diagnostics_command)
    app.command("index", help="Index the project's files and symbols (with progress).")(
        index_command
    )


def map_command(
    tokens: int = typer.Option(
        None, "--tokens", "-t", min=1, help="Token budget (default: config repo.map_tokens)."
    ),
    focus: list[str] = typer.Option(
        [],
        "--focus",
        "-f",
        help=(
            "A file in the conversation: ranks what it uses higher (its own definitions are "
            "left out, the model already sees it). Repeatable."
        ),
    ),
    mention: list[str] = typer.Option(
        [], "--mention", "-m", help="An identifier the user mentioned. Repeatable."
    ),
    root: Path = typer.Option(None, "--root", help="Project folder (default: this one)."),
) -> None:
    from loom.cli.repo_fast import run_map

    raise typer.Exit(run_map(tokens, focus, mention, root))


def index_command(
    root: Path = typer.Option(None, "--root", help="Project folder (default: this one)."),
) -> None:
    from loom.cli.repo_fast import run_index

    raise typer.Exit(run_index(root))


def diagnostics_command(
    paths: list[Path] = typer.Argument(..., help="Files to check."),
    severity: str = typer.Option(
        "warning", "--severity", "-s", help="Lowest level shown: error, warning, information, hint."
    ),
) -> None:
    import asyncio

    from loom.cli.repo_fast import open_project
    from loom.session import BadInput

    repo = open_project(None)
    try:
        found = asyncio.run(repo.diagnostics(paths, severity))
    except BadInput as exc:
        fail(exc, code=2)
    status = 0
    for item in found:
        if item.failed:
            typer.echo(f"{item.path}: {item.text}", err=True)
            status = 2
            continue
        typer.echo(item.text)
        if item.has_errors:
            status = max(status, 1)
    raise typer.Exit(status)
