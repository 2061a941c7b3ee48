"""A thread for reading: in the terminal (`loom show`), as Markdown (`loom export`), and
the summary printed when a thread is resumed (seed 002)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from rich.console import Console, Group
from rich.markdown import Markdown
from rich.padding import Padding
from rich.panel import Panel
from rich.text import Text

from loom.core.branches import hidden_indexes
from loom.core.clock import humanize_age
from loom.core.messages import AssistantMessage, ToolMessage, UserMessage
from loom.core.thread import Thread

TOOL_OUTPUT_LINES = 12


def git_line(thread: Thread) -> str | None:
    """`main @ a1b2c3d (dirty)`, or None when the thread has no git state."""
    if not (thread.git_branch or thread.git_current_commit_sha):
        return None
    branch = thread.git_branch or "(detached)"
    sha = f" @ {thread.git_current_commit_sha[:7]}" if thread.git_current_commit_sha else ""
    dirty = " (dirty)" if thread.git_end_dirty else ""
    return f"{branch}{sha}{dirty}"


def print_resume_summary(thread: Thread, console: Console, cwd: Path | None = None) -> None:
    """Seed 002's resume summary, plus warnings when the workspace or branch changed."""
    console.print(f"Resuming thread: [bold]{thread.id}[/bold]", highlight=False)
    console.print(f'Title: "{thread.title}"', highlight=False, markup=False)
    console.print(f"Messages: {len(thread.messages)}", highlight=False)
    console.print(f"Last activity: {humanize_age(thread.last_activity_at)}", highlight=False)
    line = git_line(thread)
    if line:
        console.print(f"Git: {line}", highlight=False, markup=False)
    for warning in resume_warnings(thread, cwd or Path.cwd()):
        console.print(f"[yellow]Warning:[/yellow] {warning}", highlight=False)


def resume_warnings(thread: Thread, cwd: Path) -> list[str]:
    warnings = []
    if thread.workspace_root:
        root = Path(thread.workspace_root)
        here = cwd.resolve()
        if not root.exists():
            warnings.append(f"the thread's workspace {root} no longer exists")
        elif here != root.resolve() and root.resolve() not in here.parents:
            warnings.append(f"the thread's workspace is {root}; you are in {cwd}")
    if thread.git_branch or thread.git_current_commit_sha:
        from loom.gitmeta import detect_repo_status

        status = detect_repo_status(Path(thread.workspace_root or cwd))
        if status is not None and status.branch != thread.git_branch:
            warnings.append(
                f"the thread was on branch {thread.git_branch or '(detached)'}; "
                f"the workspace is now on {status.branch or '(detached)'}"
            )
        elif status is not None and status.head_sha != thread.git_current_commit_sha:
            old = (thread.git_current_commit_sha or "none")[:7]
            warnings.append(f"HEAD moved from {old} to {(status.head_sha or 'none')[:7]}")
    return warnings


# -- loom show ---------------------------------------------------------------------------


def render_thread(thread: Thread, console: Console, show_all: bool = False) -> None:
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
    hidden = hidden_indexes(thread)  # rewound away: a side branch the model no longer sees
    skipped = 0
    for index, message in enumerate(thread.messages):
        if index in hidden:
            if not show_all:
                skipped += 1
                continue
            if index - 1 not in hidden:
                console.print("[yellow]── side branch (rewound; the model no longer sees it) ──[/]")
        elif index - 1 in hidden and show_all:
            console.print("[yellow]── end of side branch ──[/]")
        if skipped:
            _note_skipped(console, skipped)
            skipped = 0
        console.print(_render_message(message))
    if skipped:
        _note_skipped(console, skipped)
    if thread.agent_state.kind != "WaitingForUserInput":
        console.print(f"[dim]state: {thread.agent_state.kind}[/dim]")


def _note_skipped(console: Console, count: int) -> None:
    console.print(
        f"[dim]… {count} rewound message(s) on a side branch (`loom show --all` shows them)[/dim]"
    )


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


# -- loom export --format markdown ---------------------------------------------------------


def thread_to_markdown(thread: Thread) -> str:
    out = [f"# {thread.title}", ""]
    facts = [
        ("Thread", thread.id),
        ("Created", thread.created_at),
        ("Last activity", thread.last_activity_at),
        ("Workspace", thread.workspace_root),
        ("Git", git_line(thread)),
        ("Remote", thread.git_remote_url),
        ("Model", thread.model),
        ("Tags", ", ".join(thread.metadata.tags) or None),
    ]
    out += [f"- **{name}:** {value}" for name, value in facts if value]
    out.append("")
    for message in thread.messages:
        if isinstance(message, UserMessage):
            out += ["## You", "", message.content, ""]
        elif isinstance(message, AssistantMessage):
            out += ["## Loom", ""]
            if message.content:
                out += [message.content, ""]
            for call in message.tool_calls:
                args = json.dumps(call.arguments_json, indent=2, ensure_ascii=False)
                out += [f"Tool call `{call.tool_name}` ({call.id}):", "", *_fenced(args, "json")]
        elif isinstance(message, ToolMessage):
            error = " (error)" if message.is_error else ""
            out += [f"### Result of `{message.tool_name}`{error}", "", *_fenced(message.content)]
        else:
            out += [f"## {message.role.capitalize()}", "", message.content, ""]
    return "\n".join(out).rstrip() + "\n"


def _fenced(text: str, lang: str = "") -> list[str]:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{lang}", text, fence, ""]
