"""`loom plugins`: the extension points and what is plugged into them, checked."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import typer

from loom.cli._output import say


def register(app: typer.Typer) -> None:
    app.command("plugins")(plugins_command)


def plugins_command(
    as_json: bool = typer.Option(False, "--json", help="Print machine-readable JSON."),
) -> None:
    """List tool, provider, extractor and node-type plugins; a broken one says why.

    Loom's own tool families are listed too: they register through the same hook."""
    from loom.session import PLUGIN_GROUPS, Workspace

    workspace = Workspace.open(Path.cwd())
    found = asyncio.run(workspace.plugins())
    if as_json:
        rows = [
            {
                "group": p.group,
                "name": p.name,
                "target": p.target,
                "source": p.source,
                "ok": p.ok,
                "error": p.error,
                "tools": p.tools,
            }
            for p in found
        ]
        typer.echo(json.dumps(rows, indent=2))
    else:
        for group in PLUGIN_GROUPS:
            say(group)
            members = [p for p in found if p.group == group]
            if not members:
                say("  (none)")
            for p in members:
                what = (", ".join(p.tools) or "loaded") if p.ok else f"skipped: {p.error}"
                mark = "ok" if p.ok else typer.style("broken", fg="red")
                say(f"  {p.name:<12} {p.source:<18} {mark}  {what}")
    if any(not p.ok for p in found):
        raise typer.Exit(1)
