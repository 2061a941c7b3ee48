"""A thread for reading: in the terminal (`loom show`), as Markdown (`loom export`), and
the summary printed when a thread is resumed (seed 002).

Print through a `loom.cli.terminal.SafeConsole`: a thread's text (titles, answers, tool
output, branch names) is shown as text, its escape sequences written out, never run;
and none of it is read as rich markup."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console, Group
from rich.padding import Padding
from rich.panel import Panel
from rich.text import Text

from loom.cli.terminal import safe_markdown, visible, visible_block
from loom.core.branches import hidden_indexes
from loom.core.clock import humanize_age
from loom.core.export import git_line
from loom.core.messages import AssistantMessage, ToolMessage, UserMessage
from loom.core.thread import Thread

TOOL_OUTPUT_LINES = 12
FOLD_LINES = 60
FOLD_CHARS = 3000
"""Longer messages are shown folded: their head, then their size (`loom export` has all)."""


def print_resume_summary(thread: Thread, console: Console, warnings: list[str]) -> None:
    """Seed 002's resume summary, plus warnings when the workspace or branch changed
    (`Workspace.threads.resume_warnings`)."""
    console.print(f"Resuming thread: [bold]{thread.id}[/bold]", highlight=False)
    console.print(f'Title: "{visible(thread.title)}"', highlight=False, markup=False)
    console.print(f"Messages: {len(thread.messages)}", highlight=False)
    console.print(f"Last activity: {humanize_age(thread.last_activity_at)}", highlight=False)
    line = git_line(thread)
    if line:
        console.print(f"Git: {line}", highlight=False, markup=False)
    for warning in warnings:
        console.print(Text.assemble(("Warning:", "yellow"), " ", warning), highlight=False)


# -- loom show ---------------------------------------------------------------------------


def family_lines(thread: Thread) -> list[str]:
    """Where a sub-agent's thread came from, and the threads a thread's task calls ran."""
    from loom.core.family import children_of

    lines = []
    if thread.parent_thread_id:
        agent = thread.agent or "general"
        lines.append(f"sub-agent ({agent}) of {thread.parent_thread_id}, call "
                     f"{thread.parent_call_id}")  # fmt: skip
    lines += [f"sub-agent ({c.agent}): {c.thread_id}" for c in children_of(thread.messages)]
    return lines


def render_thread(thread: Thread, console: Console, show_all: bool = False) -> None:
    facts = [thread.id, f"last activity {humanize_age(thread.last_activity_at)}"]
    line = git_line(thread)
    if line:
        facts.append(f"git {line}")
    if thread.workspace_root:
        facts.append(thread.workspace_root)
    if thread.model:
        facts.append(f"{thread.provider or ''}:{thread.model}".lstrip(":"))
    if thread.worktree:
        facts.append(f"worktree {thread.worktree.get('name')} ({thread.worktree.get('branch')})")
    summary = Text(visible(" · ".join(facts)))  # a branch, a folder, a model: never markup
    summary.stylize("bold", 0, len(thread.id))
    console.print(
        Panel(summary, title=Text(visible(thread.title), style="bold"), title_align="left"),
        highlight=False,
    )
    for line in family_lines(thread):
        console.print(line, style="magenta", highlight=False, markup=False, soft_wrap=True)
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
    usage = usage_line(thread.messages)
    if usage:
        console.print(usage, style="dim", highlight=False, markup=False)
    if thread.agent_state.kind != "WaitingForUserInput":
        console.print(f"[dim]state: {thread.agent_state.kind}[/dim]")


def usage_line(messages: list[Any]) -> str:
    """`usage: 1.2M tokens in (cache 93%: ...), 3,100 out · $0.7420`; "" before any call."""
    from loom.cli.repl.status import cost_text, usage_in_text
    from loom.core.usage import usage_totals

    totals = usage_totals(messages)
    if not totals.prompt_tokens and not totals.output_tokens:
        return ""
    return (
        f"usage: {usage_in_text(totals)}, {totals.output_tokens:,} out · "
        f"{cost_text(totals.cost_usd)}"
    )


def _note_skipped(console: Console, count: int) -> None:
    console.print(
        f"[dim]… {count} rewound message(s) on a side branch (`loom show --all` shows them)[/dim]"
    )


def attachment_lines(message: Any) -> list[Text]:
    """Dimmed lines for what came with a person's message without being their words: an
    attached file (`attached calc.py:1-1`), a hook's added context (its first lines)."""
    lines: list[Text] = []
    for attached in getattr(message, "attachments", None) or ():
        if attached.kind == "hook":
            body, _note = fold(attached.text.partition("\n")[2], 3, 300)
            lines.append(Text(visible_block(f"added by the {attached.label}: {body}"), style="dim"))
        elif attached.kind == "loom":  # a note of Loom's own (plan mode, ended commands)
            lines.append(Text(f"Loom's note: {visible(attached.label)}", style="dim"))
        else:
            lines.append(Text(f"attached {visible(attached.label)}", style="dim"))
    return lines


def _render_message(message: Any) -> Any:
    if isinstance(message, UserMessage):
        shown, note = fold(message.content, FOLD_LINES)
        attached = attachment_lines(message)
        return Group(
            Text("You", style="bold cyan"),
            Padding(_with_note(Text(visible_block(shown)), note), (0, 0, 0 if attached else 1, 2)),
            *(Padding(line, (0, 0, 0, 2)) for line in attached),
            *([Text("")] if attached else []),
        )
    if isinstance(message, AssistantMessage):
        parts: list[Any] = [Text("Loom", style="bold green")]
        thought = "\n\n".join(p.text for p in message.reasoning or () if p.text)
        hidden = sum(1 for p in message.reasoning or () if not p.text)
        if thought:  # marked and dimmed: the model's reasoning, not its answer
            shown, note = fold(thought, 6, 800)
            line = Text("✻ thinking: ", style="dim bold") + Text(shown, style="dim italic")
            parts.append(Padding(_with_note(line, note), (0, 2)))
        if hidden:  # opaque (encrypted, redacted): kept for the model, never shown
            parts.append(Padding(Text(f"✻ {hidden} opaque reasoning part(s)", style="dim"), (0, 2)))
        if message.content:
            shown, note = fold(message.content, FOLD_LINES)
            body = safe_markdown(shown)
            body = body if note is None else Group(body, _note(note))
            parts.append(Padding(body, (0, 0, 0, 2)))
        for call in message.tool_calls:
            args, note = fold(json.dumps(call.arguments_json, ensure_ascii=False), 3, 400)
            line = Text(visible_block(f"→ {call.tool_name} {args}"), style="magenta")
            parts.append(Padding(_with_note(line, note), (0, 2)))
        parts.append(Text(""))
        return Group(*parts)
    if isinstance(message, ToolMessage):  # a tool's output: its escapes shown (`\x1b`)
        shown, note = fold(message.content, TOOL_OUTPUT_LINES)
        shown = visible_block(shown)  # (after the fold: a 50 MB output costs its head only)
        style = "red" if message.is_error else "dim"
        title = Text(f"{message.tool_name} result", style="magenta")
        return Padding(Group(title, _with_note(Text(shown, style=style), note)), (0, 0, 1, 2))
    shown, note = fold(message.content, FOLD_LINES)
    line = Text(f"[{message.role}] {visible_block(shown)}", style="dim")
    return Padding(_with_note(line, note), (0, 0, 1, 0))


def fold(text: str, max_lines: int, max_chars: int = FOLD_CHARS) -> tuple[str, str | None]:
    """The head of `text` to show and, when more is hidden, what was left out.

    Linear in the shown part only: a 50 MB message costs one `find` per shown line,
    never a split of the whole text (rich's layout of a huge text is what made `loom
    show` take 21 s on a 5 MB message)."""
    end = 0
    for _ in range(max_lines):
        newline = text.find("\n", end, end + max_chars + 1)
        if newline < 0:
            end = len(text)
            break
        end = newline + 1
    end = min(end, max_chars, len(text))
    if end >= len(text):
        return text, None
    hidden = text[end:]
    lines = hidden.count("\n") + 1
    return text[:end].rstrip("\n"), (
        f"… folded: {_size(len(hidden.encode('utf-8', 'replace')))} more in {lines:,} line(s); "
        "`loom export ID --format markdown` has all of it"
    )


def _size(count: int) -> str:
    for unit, scale in (("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} bytes"


def _note(note: str) -> Text:
    return Text(note, style="dim italic")


def _with_note(body: Text, note: str | None) -> Any:
    return body if note is None else Group(body, _note(note))
