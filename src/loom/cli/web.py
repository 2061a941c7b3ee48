"""`loom web`: serve the local web UI for the current project."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import typer

from loom.cli._output import error_line, warn


def register(app: typer.Typer) -> None:
    app.command("web", help="Open Loom in the browser: live sessions, history, diffs, cost.")(
        web_command
    )


def web_command(
    ctx: typer.Context,
    port: int = typer.Option(
        4200, "--port", "-p", min=0, max=65535, help="Port to listen on (0 picks a free one)."
    ),
    no_open: bool = typer.Option(False, "--no-open", help="Do not open a browser."),
    host: str = typer.Option(
        "127.0.0.1",
        "--host",
        help="Address to listen on. Anything but loopback makes the token the only protection.",
    ),
    model: str = typer.Option(
        None, "--model", "-m", help="provider:model-id for new sessions (e.g. openai:gpt-5)."
    ),
    no_sandbox: bool = typer.Option(
        False, "--no-sandbox", help="Run shell and git commands unconfined (see `loom sandbox`)."
    ),
) -> None:
    from loom.session import LoomError, Workspace, not_a_project
    from loom.web.server import BindError, serve

    root = ctx.obj if isinstance(ctx.obj, dict) else {}
    overrides: dict[str, str] = {}
    if model or root.get("model"):
        overrides["model.default"] = model or root["model"]
    if no_sandbox or root.get("no_sandbox"):
        overrides["sandbox.mode"] = "off"
    try:
        ws = Workspace.open(cwd=Path.cwd(), overrides=overrides or None)
    except LoomError as exc:
        typer.echo(error_line(exc), err=True)
        raise typer.Exit(1) from exc
    for warning in getattr(ws.config, "warnings", []):
        warn(f"loom: {warning}")
    problem = not_a_project(ws.project_root)
    if problem is not None:  # home or /: every file of the person's would be in reach
        from loom.cli.trust import ask_yes_no

        typer.echo(f"loom: {problem}; Loom works in one project folder.", err=True)
        if not (sys.stdin.isatty() and ask_yes_no(f"Serve {ws.project_root} anyway? [y/N] ")):
            typer.echo("loom: not started: run `loom web` in a project folder.", err=True)
            raise typer.Exit(2)
    untrusted = ws.trust.notice("the page asks whether to trust it") if ws.trust else None
    if untrusted:
        typer.echo(f"loom: {untrusted}", err=True)
    try:
        asyncio.run(serve(ws, host.strip(), port, open_browser=not no_open))
    except BindError as exc:
        typer.echo(error_line(exc), err=True)
        raise typer.Exit(1) from exc
    except KeyboardInterrupt:
        pass
    sys.stdout.flush()
