"""`loom acp`: Loom as an agent inside Zed and other Agent Client Protocol editors."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    app.command("acp")(acp_command)


def acp_command(
    ctx: typer.Context,
    model: str | None = typer.Option(
        None, "--model", "-m", help="provider:model-id for new sessions."
    ),
    effort: str | None = typer.Option(
        None, "--effort", help="How hard a reasoning model thinks: minimal, low, medium or high."
    ),
    log_file: str = typer.Option(
        None, "--log-file", help="Write logs here instead of stderr (stdout is the protocol)."
    ),
) -> None:
    """Speak the Agent Client Protocol (JSON-RPC) on stdin/stdout, for editors such as Zed.

    Add to Zed's settings.json: "agent_servers": {"Loom": {"command": "loom", "args": ["acp"]}}
    """
    from loom.acp.serve import serve
    from loom.cli.run.headless import check_effort_option

    model = model or (ctx.obj or {}).get("model")
    effort = check_effort_option(effort or (ctx.obj or {}).get("effort"))
    overrides = {"model.default": model} if model else {}
    if effort:
        overrides["model.effort"] = effort
    raise typer.Exit(serve(overrides, log_file))
