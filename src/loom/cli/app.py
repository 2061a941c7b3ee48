"""The Typer application. Each command group lives in its own module with a
`register(app)` function; add the module's name to COMMAND_MODULES."""

from __future__ import annotations

import importlib
import sys

import typer

from loom import __version__
from loom.cli import permission_flag

COMMAND_MODULES: list[str] = [
    # e.g. "loom.cli.threads"
    "loom.cli.threads",
    "loom.cli.server",
    "loom.cli.sync",
    "loom.cli.repo",
    "loom.cli.run.command",
    "loom.cli.chat",
    "loom.cli.config_cmd",
    "loom.cli.permissions",
    "loom.cli.checkpoints",
    "loom.cli.sandbox",
    "loom.cli.decisions",
    "loom.cli.mcp",
    "loom.cli.plugins",
    "loom.cli.acp",
    "loom.cli.web",
    "loom.cli.worktree",
    "loom.cli.trust",
]

app = typer.Typer(
    name="loom",
    help="Loom: a local-first AI coding assistant. Run `loom` in a project to chat, "
    "`loom run -p TASK` for one task without a person. Every conversation is a thread you "
    "can list, search, show, export and resume.",
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
    model: str = typer.Option(
        None, "--model", "-m", help="provider:model-id for this session (e.g. openai:gpt-5)."
    ),
    private: bool = typer.Option(
        False, "--private", help="Keep the thread on this machine: it never syncs."
    ),
    continue_latest: bool = typer.Option(
        False, "--continue", "-c", help="Chat on in the newest thread of this project."
    ),
    yes: bool = typer.Option(
        False,
        "--yes",
        "-y",
        help="Chat without questions: every tool call (but the dangerous-command floor) "
        "runs and architect plans are carried out unasked.",
    ),
    no_sandbox: bool = typer.Option(
        False, "--no-sandbox", help="Run the agent's shell and git commands unconfined."
    ),
    permission_mode: str = permission_flag.option(),
    worktree: str = typer.Option(
        None,
        "--worktree",
        "-w",
        help="Work in the project's git worktree NAME (made on branch loom/NAME from the "
        "current commit, or reused); `loom worktree list` shows them.",
    ),
    effort: str = typer.Option(
        None, "--effort", help="How hard a reasoning model thinks: minimal, low, medium or high."
    ),
) -> None:
    """Run `loom` alone to chat in this project; `loom COMMAND --help` for any command."""
    # commands read these as defaults
    if effort is not None:
        from loom.cli.run.headless import check_effort_option

        check_effort_option(effort)
        effort = effort.strip().lower()
    ctx.obj = {"model": model, "private": private, "no_sandbox": no_sandbox,
               "worktree": worktree, "effort": effort,
               "permission_mode": permission_mode}  # fmt: skip
    if ctx.invoked_subcommand is None:
        from loom.cli.repl.main import start_chat

        raise typer.Exit(
            start_chat(
                model=model,
                private=private,
                continue_latest=continue_latest,
                auto_approve=yes,
                no_sandbox=no_sandbox,
                worktree=worktree,
                effort=effort,
                permission_mode=permission_mode or "default",
            )
        )


def build_app() -> typer.Typer:
    _register(COMMAND_MODULES)
    return app


def _register(modules: list[str]) -> None:
    """Give `app` exactly the commands of `modules`. Starting afresh each time keeps a
    second call in one process (the tests run `loom` in process) from adding every
    command again."""
    app.registered_commands.clear()
    app.registered_groups.clear()
    for name in modules:
        importlib.import_module(name).register(app)


# Commands that start a session load only their own module: the other command modules
# cost ~0.1 s of start-up that `loom run` (bench/run_startup.py) and the REPL don't need.
STANDALONE_COMMANDS: dict[str, str] = {
    "run": "loom.cli.run.command",
    "chat": "loom.cli.chat",
    "acp": "loom.cli.acp",
    "web": "loom.cli.web",
}


def run_app(args: list[str]) -> None:
    from loom.cli import help_format
    from loom.session import LoomError

    standalone = bool(args) and args[0] in STANDALONE_COMMANDS and "--help" not in args
    if standalone:  # `loom run ...` prints no help: its tables' adjustments are not loaded
        help_format.apply_to_errors()
    else:
        help_format.apply()  # --help without <bool>/<str> tags, names never cut

    try:
        if not args:  # plain `loom`: the root callback opens the REPL
            app(args=args, prog_name="loom")
        elif standalone:
            _register([STANDALONE_COMMANDS[args[0]]])
            app(args=args, prog_name="loom")
        else:
            build_app()(args=args, prog_name="loom")
    except LoomError as exc:  # any command: one line, never a traceback
        from loom.cli._output import error_line

        sys.stderr.write(error_line(exc) + "\n")
        raise SystemExit(1) from None
