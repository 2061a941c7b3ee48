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
    log_file: str = typer.Option(
        None, "--log-file", help="Write logs here instead of stderr (stdout is the protocol)."
    ),
) -> None:
    """Speak the Agent Client Protocol (JSON-RPC) on stdin/stdout, for editors such as Zed.

    Add to Zed's settings.json: "agent_servers": {"Loom": {"command": "loom", "args": ["acp"]}}
    """
    from loom.acp.serve import serve

    model = model or (ctx.obj or {}).get("model")
    overrides = {"model.default": model} if model else {}
    raise typer.Exit(serve(overrides, log_file))
