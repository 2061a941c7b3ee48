"""A thread for reading: in the terminal (`loom show`), as Markdown (`loom export`), and
the summary printed when a thread is resumed (seed 002)."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console, Group
from rich.markdown import Markdown
from rich.padding import Padding
from rich.panel import Panel
from rich.text import Text

from loom.core.clock import humanize_age
from loom.core.export import git_line
from loom.core.messages import AssistantMessage, ToolMessage, UserMessage
from loom.core.thread import Thread

TOOL_OUTPUT_LINES = 12


def print_resume_summary(thread: Thread, console: Console, warnings: list[str]) -> None:
    """Seed 002's resume summary, plus warnings when the workspace or branch changed
    (`Workspace.threads.resume_warnings`)."""
    console.print(f"Resuming thread: [bold]{thread.id}[/bold]", highlight=False)
    console.print(f'Title: "{thread.title}"', highlight=False, markup=False)
    console.print(f"Messages: {len(thread.messages)}", highlight=False)
    console.print(f"Last activity: {humanize_age(thread.last_activity_at)}", highlight=False)
    line = git_line(thread)
    if line:
        console.print(f"Git: {line}", highlight=False, markup=False)
    for warning in warnings:
        console.print(f"[yellow]Warning:[/yellow] {warning}", highlight=False)


# -- loom show ---------------------------------------------------------------------------


def render_thread(thread: Thread, console: Console) -> None:
    facts = [f"[bold]{thread.id}[/bold]", f"last activity {humanize_age(thread.last_activity_at)}"]
    line = git_line(thread)
    if line:
        facts.append(f"git {line}")
    if thread.workspace_root:
        facts.append(thread.workspace_root)
    if thread.model:
        facts.append(f"{thread.provider or ''}:{thread.model}".lstrip(":"))
    console.print(
        Panel(" · ".join(facts), title=Text(thread.title, style="bold"), title_align="left"),
        highlight=False,
    )
    for message in thread.messages:
        console.print(_render_message(message))
    if thread.agent_state.kind != "WaitingForUserInput":
        console.print(f"[dim]state: {thread.agent_state.kind}[/dim]")


def _render_message(message: Any) -> Any:
    if isinstance(message, UserMessage):
        return Group(Text("You", style="bold cyan"), Padding(Text(message.content), (0, 0, 1, 2)))
    if isinstance(message, AssistantMessage):
        parts: list[Any] = [Text("Loom", style="bold green")]
        if message.content:
            parts.append(Padding(Markdown(message.content), (0, 0, 0, 2)))
        for call in message.tool_calls:
            args = json.dumps(call.arguments_json, ensure_ascii=False)
            parts.append(Padding(Text(f"→ {call.tool_name} {args}", style="magenta"), (0, 2)))
        parts.append(Text(""))
        return Group(*parts)
    if isinstance(message, ToolMessage):
        lines = message.content.splitlines()
        shown = "\n".join(lines[:TOOL_OUTPUT_LINES])
        if len(lines) > TOOL_OUTPUT_LINES:
            shown += f"\n… ({len(lines) - TOOL_OUTPUT_LINES} more lines; `loom export` has all)"
        style = "red" if message.is_error else "dim"
        title = Text(f"{message.tool_name} result", style="magenta")
        return Padding(Group(title, Text(shown, style=style)), (0, 0, 1, 2))
    return Padding(Text(f"[{message.role}] {message.content}", style="dim"), (0, 0, 1, 0))
