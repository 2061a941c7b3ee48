"""`loom mcp list|add|remove|approve|serve`: external MCP servers Loom's agent uses, and
Loom itself as an MCP server."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from loom.cli._output import error_line, warn

if TYPE_CHECKING:
    from loom.config import LoomConfig

mcp_app = typer.Typer(
    help="MCP: external servers whose tools Loom's agent uses (mcp.servers.NAME, .mcp.json), "
    "and `loom mcp serve` to offer Loom's tools and threads to other agents.",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    app.add_typer(mcp_app, name="mcp")


def _config(project: Path | None = None) -> LoomConfig:
    from loom.config import ConfigError, load_config

    if project is not None and not project.is_dir():
        raise _fail(f"{project} is not a folder; pass the project folder to --project", 2)
    try:
        config = load_config(project or Path.cwd())
    except ConfigError as exc:
        typer.echo(error_line(exc), err=True)
        raise typer.Exit(2) from exc
    for warning in config.warnings:
        warn(f"warning: {warning}")
    untrusted = config.trust.notice() if config.trust is not None else None
    if untrusted:  # its .loom.toml servers and .mcp.json: listed, started only if approved
        typer.echo(f"loom: {untrusted}", err=True)
    return config


def _fail(message: str, code: int = 1) -> typer.Exit:
    typer.echo(error_line(message), err=True)
    return typer.Exit(code)


@mcp_app.command("list")
def list_command(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Each server: where it is defined, status, tool count, tokens its tools cost.

    Starts each server briefly to ask it."""
    from loom.session import probe_mcp_servers

    config = _config()
    rows = asyncio.run(probe_mcp_servers(config))
    if as_json:
        typer.echo(json.dumps([row.__dict__ for row in rows], indent=1))
        return
    if not rows:
        typer.echo("No MCP servers. Add one: loom mcp add NAME -- COMMAND ARGS... (or --url URL)")
        return
    from loom.config import visible

    names = {row.name: visible(row.name) for row in rows}  # a project's: anything at all
    width = max(len(name) for name in names.values())
    for row in rows:
        typer.echo(
            f"{names[row.name]:<{width}}  {row.state:<14} {row.tools:>3} tools  "
            f"{row.tokens:>6} tokens  [{row.origin}] {row.detail}"
        )
        if row.origin == "project":  # what the repository chose, in full
            for line in row.details:
                typer.echo(f"{'':<{width}}    {line}")
    budget = config.mcp.tool_tokens
    total = sum(row.tokens for row in rows)
    if total > budget:
        typer.echo(
            f"Tool definitions cost {total} tokens, over [mcp] tool_tokens = {budget}: the "
            "agent gets names and one-line descriptions, and looks schemas up."
        )


def _pairs(values: list[str], flag: str) -> dict[str, str]:
    out = {}
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key:
            raise _fail(f"{flag} {value!r}: write KEY=VALUE", 2)
        out[key] = rest
    return out


def _target_file(project: bool) -> Path:
    from loom.config import PROJECT_CONFIG_NAME, find_project
    from loom.paths import LoomPaths

    if project:
        root, existing = find_project(Path.cwd())
        return existing or root / PROJECT_CONFIG_NAME
    return LoomPaths.from_env().user_config_file


@mcp_app.command("add")
def add_command(
    name: str = typer.Argument(..., help="Server name: its tools become mcp__NAME__TOOL."),
    command: list[str] = typer.Argument(None, help="After `--`: the command and its args."),
    url: str = typer.Option(None, "--url", help="A streamable-HTTP server's URL instead."),
    header: list[str] = typer.Option([], "--header", help="HTTP header KEY=VALUE (repeat)."),
    env: list[str] = typer.Option([], "--env", "-e", help="Environment KEY=VALUE (repeat)."),
    timeout: float = typer.Option(None, "--timeout", help="Seconds per tool call."),
    project: bool = typer.Option(
        False, "--project", help="Write to this project's .loom.toml, not your config.toml."
    ),
) -> None:
    """Add a server: `loom mcp add fs -- npx -y @modelcontextprotocol/server-filesystem .`"""
    from loom.session import McpAdminError, add_mcp_server

    file = _target_file(project)
    was_trusted = project and _trusted()
    try:
        add_mcp_server(
            file,
            name,
            command=command or (),
            url=url,
            env=_pairs(env, "--env"),
            headers=_pairs(header, "--header"),
            timeout=timeout,
        )
    except (McpAdminError, OSError) as exc:
        raise _fail(str(exc), 2) from exc
    if project:  # a project-defined server needs approval; you just gave it
        from loom.session import approve_project_mcp_server

        approve_project_mcp_server(_config(), name)
        _keep_trusted(was_trusted)
    typer.echo(f"Added MCP server {name!r} to {file}. `loom mcp list` shows whether it starts.")


def _trusted() -> bool:
    from loom.config import ConfigError, load_config

    try:
        trust = load_config(Path.cwd()).trust
    except ConfigError:
        return False
    return trust is not None and trust.state == "trusted"


def _keep_trusted(was_trusted: bool) -> None:
    """You changed a trusted project's file yourself: it stays trusted as it is now
    (otherwise your own edit would make it ask again)."""
    if was_trusted:
        from loom.config import load_config

        try:
            load_config(Path.cwd()).trust.trust()
        except OSError as exc:
            typer.echo(
                f"loom: warning: cannot keep the project trusted ({exc}); its settings are "
                "ignored until you run `loom trust`",
                err=True,
            )


@mcp_app.command("remove")
def remove_command(
    name: str = typer.Argument(...),
    project: bool = typer.Option(False, "--project", help="Remove it from .loom.toml."),
) -> None:
    """Remove the server mcp.servers.NAME from your config.toml (or the project's .loom.toml)."""
    from loom.session import remove_mcp_server

    file = _target_file(project)
    was_trusted = project and _trusted()
    if not remove_mcp_server(file, name):
        other = "your config.toml" if project else ".loom.toml (--project)"
        raise _fail(f"{file} has no [mcp.servers.{name}]; is it in {other} or .mcp.json?")
    _keep_trusted(was_trusted)
    typer.echo(f"Removed MCP server {name!r} from {file}.")


@mcp_app.command("approve")
def approve_command(
    name: str = typer.Argument(...),
    yes: bool = typer.Option(False, "--yes", "-y", help="Approve without a question."),
) -> None:
    """Let a server this project defines (.mcp.json or .loom.toml) start.

    It starts a program the repository chose: everything it runs with is shown first,
    then you are asked (without a terminal, pass --yes)."""
    import sys

    from loom.session import McpAdminError, approve_project_mcp_server, find_mcp_server

    config = _config()
    try:
        spec = find_mcp_server(config, name)
    except McpAdminError as exc:
        raise _fail(str(exc)) from exc
    typer.echo(f"MCP server {name!r}, defined in {spec.source}:")
    for line in spec.details():
        typer.echo(f"    {line}")
    if not yes:
        if not sys.stdin.isatty():  # as `loom trust`: a script must say so with --yes
            typer.echo(f"Not a terminal: pass --yes to approve {name!r}.", err=True)
            raise typer.Exit(1)
        from loom.cli.trust import ask_yes_no

        if not ask_yes_no(f"Approve {name!r} for this project? [y/N] "):
            typer.echo("Not approved.")
            raise typer.Exit(1)
    try:
        approve_project_mcp_server(config, name)
    except McpAdminError as exc:
        raise _fail(str(exc)) from exc
    typer.echo(f"Approved MCP server {name!r} for this project.")


@mcp_app.command("serve")
def serve_command(
    http: bool = typer.Option(False, "--http", help="Streamable HTTP on 127.0.0.1."),
    port: int = typer.Option(
        8765, "--port", min=0, max=65535, help="Port for --http (0: any free port)."
    ),
    allow: list[str] = typer.Option(
        [], "--allow", help="A tool (or glob) that runs without asking (repeat)."
    ),
    project: Path = typer.Option(
        None, "--project", "-C", help="The project to serve (default: the current folder)."
    ),
    include_private: bool = typer.Option(
        False, "--include-private", help="thread_search/thread_show show private threads too."
    ),
) -> None:
    """Offer Loom's tools and threads to another agent over MCP (stdio by default).

    Shell and git run in the session's sandbox under its permissions; read-only tools
    run; others ask through the client (elicitation) or are refused. The thread tools
    see this project's threads only, and no private one without --include-private."""
    from loom.mcp import serve_http, serve_stdio
    from loom.session import LoomError, Workspace

    config = _config(project)
    workspace = Workspace(config)
    try:
        if not http:
            # SIGTERM ends it as Ctrl-C does: the tools' clean-up and the session's temp
            # folder go too (over HTTP, uvicorn handles both signals)
            served = serve_stdio(workspace, allow=allow, include_private=include_private)
            asyncio.run(_until_stopped(served))
            return
        token = os.environ.get("LOOM_MCP_TOKEN") or ""
        shown = not token
        token = token or secrets.token_urlsafe(24)
        served = serve_http(
            workspace,
            port=port,
            token=token,
            allow=allow,
            token_shown=shown,
            include_private=include_private,
        )
        asyncio.run(served)
    except LoomError as exc:
        raise _fail(str(exc), 2) from exc
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        if not http:
            raise _fail(f"cannot serve on stdin/stdout: {exc}") from exc
        raise _fail(f"cannot serve on 127.0.0.1:{port} ({exc}); pick another --port") from exc


async def _until_stopped(serving: Coroutine[Any, Any, None]) -> None:
    """Run `serving` until it ends or Ctrl-C / SIGTERM cancels it. The signals cancel the
    task on the loop: a KeyboardInterrupt raised inside the SDK's task group would end the
    process with the group's traceback on stderr."""
    from loom.cli.run.signals import StopSignals

    signals = StopSignals()
    try:
        await serving
    except asyncio.CancelledError:
        if not signals.absorb():
            raise
    finally:
        signals.close()
