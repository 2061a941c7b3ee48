"""`loom decisions`: the project's decision graph (list, show, pulse, narrative, export)."""

from __future__ import annotations

import json
from typing import Any

import typer

from loom.cli._output import person_errors, say

decisions_app = typer.Typer(
    help="The decision graph: goals, decisions, options, actions and outcomes the agent "
    "logged in this project, why, and what came of them.",
    invoke_without_command=True,
)


def register(app: typer.Typer) -> None:
    app.add_typer(decisions_app, name="decisions")


def _api() -> Any:
    from loom.session import Workspace

    return Workspace.open().decisions


def _row_dict(node: Any) -> dict[str, Any]:
    return dict(node.__dict__)


@decisions_app.callback()
def list_command(
    ctx: typer.Context,
    node_type: list[str] = typer.Option(
        None, "--type", "-t", help="Only nodes of this type (repeatable): goal, decision, ..."
    ),
    status: list[str] = typer.Option(
        None, "--status", "-s", help="Only this status (repeatable): active, superseded, abandoned."
    ),
    thread: str = typer.Option(None, "--thread", help="Only nodes this thread logged."),
    limit: int = typer.Option(50, "--limit", "-n", min=1, help="At most this many, newest first."),
    all_projects: bool = typer.Option(False, "--all-projects", help="Every project's nodes."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List the newest nodes of this project's decision graph."""
    if ctx.invoked_subcommand is not None:
        return
    with person_errors(bad_input_code=2):
        rows = _api().list(
            types=node_type, statuses=status, thread=thread, limit=limit,
            all_projects=all_projects,
        )  # fmt: skip
    if as_json:
        typer.echo(json.dumps([_row_dict(r) for r in rows], indent=2))
        return
    if not rows:
        typer.echo(
            "No decisions logged in this project yet. The agent logs goals, decisions and "
            "outcomes with its decision_log tool as it works."
        )
        return
    from rich.table import Table
    from rich.text import Text

    from loom.cli.terminal import SafeConsole
    from loom.core.clock import humanize_age
    from loom.session import one_line

    table = Table(box=None, header_style="bold")
    for column in ("id", "type", "title", "conf", "status", "updated"):
        table.add_column(column, overflow="fold")
    for r in rows:
        colour = "green" if r.confidence >= 70 else "yellow" if r.confidence >= 50 else "red"
        table.add_row(  # Text: a title's "[/]" or "[bold]" is not Rich markup
            Text(r.id), Text(r.node_type), Text(one_line(r.title)),
            Text(str(r.confidence), style=colour), Text(r.status), humanize_age(r.updated_at),
        )  # fmt: skip
    SafeConsole().print(table)
    typer.echo("Details: `loom decisions show ID`; health: `loom decisions pulse`.")


@decisions_app.command("show")
def show_command(
    node_id: str = typer.Argument(..., metavar="ID", help="A node id or unique prefix."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """One node: what it says, its links, and whether it is uncertain."""
    with person_errors(bad_input_code=2):
        view = _api().show(node_id)
    node = view.node
    if as_json:
        links = [
            {"direction": d, "edge_type": e.edge_type, "node": o.id if o else None}
            for d, e, o in view.links
        ]
        typer.echo(json.dumps({**_row_dict(node), "links": links,
                               "uncertain": view.uncertain}, indent=2))  # fmt: skip
        return
    from loom.session import SHOW_WIDTH, cut_note, one_line

    title = one_line(node.title, SHOW_WIDTH)
    say(f"{node.id}  [{node.node_type}]  {title}")
    if note := cut_note(node.title, title):
        say(note)
    say(f"status {node.status}, confidence {node.confidence}"
               + ("  (uncertain)" if view.uncertain else ""))  # fmt: skip
    say(f"thread {node.thread_id}, logged {node.created_at}")
    if node.metadata:
        say("metadata: " + ", ".join(f"{k}={v}" for k, v in node.metadata.items()))
    if node.description:
        say("")
        say(node.description)
    if view.links:
        say("")
        for direction, edge, other in view.links:
            arrow = "->" if direction == "child" else "<-"
            label = "(missing)"
            if other is not None:
                label = f"{other.id} [{other.node_type}] {one_line(other.title)}"
            say(f"  {arrow} {one_line(edge.edge_type, 30):<10} {label}")


@decisions_app.command("pulse")
def pulse_command(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Health of the graph: goals, recent decisions, gaps, doubts, stale nodes, orphans."""
    with person_errors(bad_input_code=2):
        api = _api()
        pulse = api.pulse()
    if as_json:
        typer.echo(json.dumps(pulse.as_dict(), indent=2))
    else:
        say(api.render_pulse(pulse))  # titles the model logged: shown as text


@decisions_app.command("narrative")
def narrative_command(
    thread: str = typer.Option(None, "--thread", help="The story of this thread's nodes."),
    goal: str = typer.Option(None, "--goal", help="The story of this goal and what followed."),
) -> None:
    """A thread's or a goal's nodes as a timeline, in words."""
    with person_errors(bad_input_code=2):
        say(_api().narrative(thread=thread, goal=goal))


@decisions_app.command("export")
def export_command(
    fmt: str = typer.Option("mermaid", "--format", "-f", help="mermaid, dot or json."),
    output: str = typer.Option(None, "--output", "-o", help="Write to this file."),
) -> None:
    """The whole project graph as Mermaid, Graphviz dot or JSON."""
    with person_errors(bad_input_code=2):
        text = _api().export(fmt)
    if output:
        from pathlib import Path

        Path(output).write_text(text)
        typer.echo(f"Wrote {output}.")
    else:
        typer.echo(text, nl=False)
