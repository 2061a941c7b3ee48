"""The Typer application. Each command group lives in its own module with a
`register(app)` function; add the module's name to COMMAND_MODULES."""

from __future__ import annotations

import importlib

import typer

from loom import __version__

COMMAND_MODULES: list[str] = [
    # e.g. "loom.cli.threads"
    "loom.cli.threads",
    "loom.cli.server",
    "loom.cli.sync",
    "loom.cli.repo",
]

app = typer.Typer(
    name="loom",
    help="Loom: a local-first AI coding assistant. Every conversation is a thread you can "
    "list, search, show, export and resume.",
    no_args_is_help=False,
    add_completion=False,
    rich_markup_mode="rich",
)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"loom {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    version: bool = typer.Option(
        False,
        "--version",
        "-V",
        help="Print the version and exit.",
        callback=_version_callback,
        is_eager=True,
    ),
) -> None:
    """Run `loom COMMAND --help` for any command."""
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())


def build_app() -> typer.Typer:
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(app)
    return app


def run_app(args: list[str]) -> None:
    build_app()(args=args, prog_name="loom")
