"""The REPL's commands: `loom` (or `loom chat`, `loom -c`, `loom resume [ID]`).

The REPL itself is the `loom.cli.repl` package (its docstring lists the modules);
`approve` asks permission questions and `chat_render` shows the session's events.
"""

from __future__ import annotations

import typer

from loom.cli.repl.main import continue_thread, start_chat

__all__ = ["continue_thread", "register", "start_chat"]


def register(app: typer.Typer) -> None:
    app.command("chat", help="Talk to Loom in this project (what plain `loom` does).")(chat_command)


def chat_command(
    ctx: typer.Context,
    model: str = typer.Option(None, "--model", "-m", help="provider:model-id"),
    private: bool = typer.Option(False, "--private", help="Keep this thread on this machine."),
    no_sandbox: bool = typer.Option(
        False, "--no-sandbox", help="Run shell and git commands unconfined (see `loom sandbox`)."
    ),
) -> None:
    root = ctx.obj if isinstance(ctx.obj, dict) else {}
    code = start_chat(
        model=model or root.get("model"),
        private=private or bool(root.get("private")),
        no_sandbox=no_sandbox or bool(root.get("no_sandbox")),
    )
    raise typer.Exit(code)
