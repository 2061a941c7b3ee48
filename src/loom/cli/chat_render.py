"""How the REPL shows a session's events: streamed text, tool lines, retries, errors."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, assert_never

from rich.console import Console
from rich.text import Text

from loom.cli.markdown_stream import MarkdownStream
from loom.cli.render_thread import attachment_lines
from loom.cli.stream_echo import OpenBlockEcho
from loom.cli.terminal import safe_markdown, visible_block
from loom.cli.thinking_view import ThinkingView
from loom.core.events import (
    ArchitectPlan,
    ArchitectStep,
    BackgroundCommandChanged,
    ContextCompacted,
    ConversationRewound,
    DecisionCascade,
    FilesRestored,
    LlmRetry,
    ModeChanged,
    NewMessage,
    Notice,
    PermissionModeChanged,
    PermissionRequest,
    SessionError,
    SessionEvent,
    SessionStatus,
    SubagentMessage,
    SubagentStatus,
    SyncError,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    TodoList,
    ToolComplete,
    ToolExecuting,
    ToolProgress,
    TurnComplete,
)
from loom.core.messages import AssistantMessage, ToolMessage, UserMessage
from loom.session import ToolPresentation, edit_diff, present_call, read_text

PREVIEW_CHARS = 160
PERMISSION_MODE_LINES = {
    "default": " (tools ask as configured)",
    "acceptEdits": " (file edits in the project run unasked; commands still ask)",
    "plan": " (nothing changes: the agent reads, then proposes a plan for you to approve)",
    "bypassPermissions": " (every tool runs unasked; dangerous commands still ask)",
}
HISTORY_LINES = 20  # of one message in the resume recap and /history
HISTORY_CHARS = 2_000
SUCCESS_LINE = "[exit code 0]"  # the shell tool's last line for a command that succeeded


_TODO_MARKS = {
    "completed": ("[x]", "dim"),
    "in_progress": ("[~]", "bold cyan"),
    "pending": ("[ ]", ""),
}


def describe_call(
    tool_name: str, arguments: dict[str, Any], shown: ToolPresentation | None = None
) -> str:
    """`file_read src/app.py`, `shell pytest -q`: the one argument a person wants to see
    (the call's subject, as its tool presents it)."""
    shown = shown or present_call(None, tool_name, arguments)
    if shown.subject:
        return f"{tool_name} {shown.subject}"
    if not arguments:
        return tool_name
    text = json.dumps(arguments, ensure_ascii=False)
    return f"{tool_name} {text[:PREVIEW_CHARS]}"


def preview(result: str) -> str:
    lines = result.strip().splitlines()
    if lines and lines[-1] == SUCCESS_LINE:  # the shell's status line: not output
        lines.pop()
    if not lines:
        return "(no output)"
    first = lines[0][:PREVIEW_CHARS]
    more = f"  (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
    return first + more


def fold_message(content: str) -> tuple[str, int]:
    """A message's head for a recap (at most HISTORY_LINES lines, HISTORY_CHARS
    characters) and how many characters were left out; reads only the head."""
    head = content[:HISTORY_CHARS]
    lines = head.split("\n", HISTORY_LINES)
    if len(lines) > HISTORY_LINES:
        head = "\n".join(lines[:HISTORY_LINES])
    return head, len(content) - len(head)


class EventRenderer:
    """Prints events as they arrive. Text deltas stream; a finished assistant message
    is printed whole only when nothing of it was streamed."""

    def __init__(
        self,
        console: Console,
        *,
        show_tool_output: bool = True,
        show_messages: bool = True,
        project_root: Path | None = None,
        before_write: Callable[[], None] | None = None,
        markdown: bool = False,
        show_progress: bool = True,
        tools: Any = None,
    ) -> None:
        self.console = console
        self.tools = tools  # the session's ToolRegistry: how each tool shows its calls
        self.before_write = before_write  # e.g. erase the spinner line
        self.markdown = markdown  # answers rendered as Markdown, block by block
        self.show_progress = show_progress  # False: a spinner line shows tool progress
        self._stream: MarkdownStream | None = None
        # a terminal shows the open block as plain text while it arrives
        self._echo = OpenBlockEcho(self._write_echo) if console.is_terminal else None
        self._blocks = 0  # Markdown blocks printed for the current message
        self.project_root = project_root  # set: edits show their applied diff
        self._before_edit: dict[str, tuple[str, str | None]] = {}  # call id -> (path, text)
        self._asked_with: dict[str, str] = {}  # call id -> the diff/content its question showed
        self._running: dict[str, str] = {}  # call id -> how it was shown, until it finishes
        self._last_started: str | None = None  # the call whose line was printed last
        self._children: dict[str, str] = {}  # task call id -> its sub-agent's description
        self.show_tool_output = show_tool_output
        self.show_messages = show_messages  # False: only activity (loom run --verbose)
        self._streamed = False  # text of the current model message went out as deltas
        self._at_line_start = True
        self.last_text = ""  # the newest assistant text shown
        self.last_error = ""  # the newest error event shown
        self.errors_shown: set[str] = set()  # every error event's text (a face may reset it)
        self.thinking = ThinkingView()  # the model's reasoning: dimmed, folded to a line

    @property
    def at_line_start(self) -> bool:
        return self._at_line_start

    def _write_raw(self, text: str) -> None:
        if self.before_write is not None:
            self.before_write()
        text = visible_block(text)  # a model's text: shown, never acted on
        self.console.file.write(text)
        self.console.file.flush()
        if text:
            self._at_line_start = text.endswith("\n")

    def end_line(self) -> None:
        if not self._at_line_start:
            self._write_raw("\n")

    def finish(self) -> None:
        """The turn is over: print what is left of a streamed answer, end the line."""
        self._close_thinking()
        self._close_stream()
        self.end_line()

    def line(self, text: str | Text, style: str | None = None) -> None:
        """One line (or a few) of text; a str is shown as text, its controls as escapes
        (the console, a SafeConsole, does the same for what a Text holds)."""
        if isinstance(text, str):
            text = visible_block(text)
        self._close_stream()
        self.end_line()
        if self.before_write is not None:
            self.before_write()
        self.console.print(text, style=style, highlight=False, markup=False, soft_wrap=True)
        self._at_line_start = True

    def text(self, text: Text) -> None:
        """Styled text as it is (a diff, a file's content), never read as markup."""
        self.end_line()
        if self.before_write is not None:
            self.before_write()
        self.console.print(text, end="", highlight=False, soft_wrap=True)
        self._at_line_start = True

    def render(self, event: SessionEvent) -> None:
        if self.thinking.open and event.type != "thinking_delta":
            self._close_thinking()
        # every event type has a case: basedpyright fails on one without (assert_never)
        match event:
            case ThinkingDeltaEvent():
                self._on_thinking_delta(event)
            case TextDeltaEvent():
                self._on_text_delta(event)
            case NewMessage():
                self._on_new_message(event)
            case ToolExecuting():
                self._on_tool_executing(event)
            case ToolProgress():
                self._on_tool_progress(event)
            case ToolComplete():
                self._on_tool_complete(event)
            case LlmRetry():
                self._on_llm_retry(event)
            case SessionError():
                self._on_error(event)
            case Notice():
                self._on_notice(event)
            case SubagentStatus():
                self._on_subagent_status(event)
            case SyncError():
                self._on_sync_error(event)
            case ArchitectPlan():
                self._on_architect_plan(event)
            case TodoList():
                self._on_todo_list(event)
            case ArchitectStep():
                self._on_architect_step(event)
            case ContextCompacted():
                self._on_context_compacted(event)
            case ModeChanged():
                self._on_mode_changed(event)
            case PermissionModeChanged():
                self._on_permission_mode_changed(event)
            case PermissionRequest() | SessionStatus() | TurnComplete():
                pass  # the REPL asks, its status line shows them, the turn's end is its own
            case SubagentMessage():
                self._on_subagent_message(event)
            case BackgroundCommandChanged():
                self._on_background_command(event)
            case FilesRestored() | ConversationRewound() | DecisionCascade():
                pass  # said by the command that caused them, or not shown on a terminal
            case _:
                assert_never(event)

    def _on_thinking_delta(self, event: ThinkingDeltaEvent) -> None:
        if not self.show_messages:
            return
        starting = not self.thinking.open
        shown = self.thinking.feed(event.text)
        if shown:
            if starting:
                self._close_stream()
                self.end_line()
            if self.before_write is not None:
                self.before_write()
            self.console.print(Text(shown, style="dim italic"), end="", soft_wrap=True)
            self._at_line_start = shown.endswith("\n")

    def _close_thinking(self) -> None:
        was_unfolded = self.thinking.unfolded
        folded = self.thinking.close()
        if folded:
            self.line(Text(folded, style="dim"))
        elif was_unfolded:
            self.end_line()

    def _on_text_delta(self, event: TextDeltaEvent) -> None:
        self._streamed = True
        if not self.markdown:
            self._write_raw(event.text)
            return
        if self._stream is None:
            self._stream = MarkdownStream(self._markdown_block)
            self._blocks = 0
        self._stream.feed(event.text)
        open_text = self._stream.open_text()
        if self._echo is not None and open_text:
            self._echo.show(("\n" if self._blocks else "") + open_text)

    def _write_echo(self, text: str) -> None:
        if self.before_write is not None:
            self.before_write()
        self.console.file.write(text)
        self.console.file.flush()
        # an erase (cursor up, erase down) ends at a line's start
        self._at_line_start = text.endswith(("\n", "\x1b[J"))

    def _markdown_block(self, source: str) -> None:
        # made before the plain echo is erased: its first use imports rich.markdown, and
        # keys typed meanwhile would be echoed onto the erased line
        rendered = safe_markdown(source)
        if self._echo is not None and self._echo.active and not self._echo.erase():
            self._blocks += 1  # too tall to redraw: it stays as the plain text shown
            return
        self.end_line()
        if self.before_write is not None:
            self.before_write()
        if self._blocks:
            self.console.print()
        self.console.print(rendered, soft_wrap=False)
        self._blocks += 1
        self._at_line_start = True

    def _print_markdown(self, source: str) -> None:
        self.end_line()
        if self.before_write is not None:
            self.before_write()
        self.console.print(safe_markdown(source), soft_wrap=False)
        self._at_line_start = True

    def _close_stream(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            stream.close()
        if self._echo is not None and self._echo.active:
            self._echo.erase()  # only blank text was left open

    def _on_new_message(self, event: NewMessage) -> None:
        message = event.message
        if isinstance(message, UserMessage):
            for image in message.images or ():  # what the model is shown besides the text
                self.line(f"  attached image: {image.describe()}", style="dim")
            for attached in attachment_lines(message):  # files, a hook's added context
                self.line(f"  {attached.plain}", style="dim")
        if message.role != "assistant" or not self.show_messages:
            return
        self._close_stream()
        if message.content and not self._streamed:
            if self.markdown:
                self._blocks = 0
                self._markdown_block(message.content)
            else:
                self.line(message.content)
        if message.content:
            self.last_text = message.content
        self.end_line()
        self._streamed = False

    def _on_tool_executing(self, event: ToolExecuting) -> None:
        shown = present_call(self.tools, event.tool_name, event.arguments)
        described = describe_call(event.tool_name, event.arguments, shown)
        self._running[event.call_id] = described
        self._last_started = event.call_id
        self.line(f"● {described}", style="cyan")
        path = shown.path
        if self.project_root is not None and shown.edits_files and path:
            self._before_edit[event.call_id] = (path, read_text(self.project_root, path))

    def shown_before_running(self, call_id: str, body: str) -> None:
        """The permission question showed this call's whole diff (or new file): the
        applied diff is printed again only if it came out different."""
        if call_id:
            self._asked_with[call_id] = body

    def _on_tool_progress(self, event: ToolProgress) -> None:
        if event.message and self.show_progress:
            self.line(f"  … {event.message}", style="dim")

    def _on_tool_complete(self, event: ToolComplete) -> None:
        edited = self._before_edit.pop(event.call_id, None)
        asked_with = self._asked_with.pop(event.call_id, None)
        others_running = len(self._running) > 1
        described = self._running.pop(event.call_id, "")
        # calls that ran at the same time finish in any order: name the one this is, unless
        # its own line is the one just above and nothing else is still running
        named = others_running or event.call_id != self._last_started
        which = f"{described}: " if described and named else ""
        self._last_started = None
        if event.is_error:
            self.line(f"  ⎿ {which}error: {preview(event.result)}", style="red")
            return
        if self.show_tool_output:
            self.line(f"  ⎿ {which}{preview(event.result)}", style="dim")
        if edited is not None and self.project_root is not None:
            self._show_applied_diff(*edited, asked_with)

    def _show_applied_diff(self, path: str, before: str | None, asked_with: str | None) -> None:
        from loom.cli.approve import applied_diff_lines

        after = read_text(self.project_root, path) if self.project_root else None
        if after is None or after == before:
            return
        diff = edit_diff(before, after, path)
        if asked_with is not None and asked_with in (diff, after if before is None else None):
            return  # the question showed exactly this a moment ago
        body, more = applied_diff_lines(diff)
        self.text(body)
        if more:
            self.line(
                f"  … {more} more lines of this diff (/diff shows the session's)", style="dim"
            )

    def _on_llm_retry(self, event: LlmRetry) -> None:
        self.line(
            f"  retrying in {event.delay_seconds:.1f}s (attempt {event.attempt}): {event.error}",
            style="yellow",
        )

    def _on_error(self, event: SessionError) -> None:
        self.last_error = event.message
        self.errors_shown.add(event.message)
        self.line(f"error ({event.origin}): {event.message}", style="bold red")

    def _on_notice(self, event: Notice) -> None:
        source = f"{event.source}: " if event.source else ""
        self.line(f"{source}{event.text}", style="yellow" if event.level == "warning" else "dim")

    def _on_subagent_status(self, event: SubagentStatus) -> None:
        who = f"sub-agent {event.agent}" if event.agent else "sub-agent"
        what = f": {event.description}" if event.description else ""
        style = {"started": "magenta", "completed": "green"}.get(event.status, "red")
        detail = f" ({event.detail})" if event.detail else ""
        self.line(f"  ↳ {who} {event.status}{what}  [{event.child_thread_id}]{detail}", style=style)
        if event.status == "started":
            self._children[event.call_id] = event.description
        else:
            self._children.pop(event.call_id, None)

    def _on_subagent_message(self, event: SubagentMessage) -> None:
        """A sub-agent's step, under its task line, dimmed: what it says (a line), each
        call it makes, each call that failed. Named when several children run at once."""
        name = self._children.get(event.call_id, "")
        indent = f"    [{name}] " if name and len(self._children) > 1 else "    "
        message = event.message
        if isinstance(message, AssistantMessage):
            said = " ".join(message.content.split())
            if said:
                cut = said if len(said) <= PREVIEW_CHARS else said[: PREVIEW_CHARS - 1] + "…"
                self.line(f"{indent}{cut}", style="dim")
            for call in message.tool_calls:
                shown = present_call(self.tools, call.tool_name, call.arguments_json)
                described = describe_call(call.tool_name, call.arguments_json, shown)
                self.line(f"{indent}● {described}", style="dim")
        elif isinstance(message, ToolMessage) and message.is_error:
            self.line(f"{indent}  ⎿ error: {preview(message.content)}", style="dim red")

    def _on_sync_error(self, event: SyncError) -> None:
        self.line(f"sync: {event.message} (saved locally; will retry)", style="yellow")

    def _on_architect_plan(self, event: ArchitectPlan) -> None:
        self.line(f"Plan: {event.summary}" if event.summary else "Plan:", style="bold magenta")
        for number, step in enumerate(event.steps, 1):
            where = f" {step.get('file')}" if step.get("file") else ""
            self.line(
                f"  {number}. [{step.get('action', '')}]{where}: {step.get('description', '')}"
            )

    def _on_todo_list(self, event: TodoList) -> None:
        """The agent's todo list (or an architect plan's steps) as a checklist."""
        todos = event.todos
        done = sum(item.status == "completed" for item in todos)
        title = "Plan" if event.source == "architect" else "Todo"
        self.line(f"{title} ({done}/{len(todos)} done)" if todos else f"{title}: cleared",
                  style="bold")  # fmt: skip
        for item in todos:
            mark, style = _TODO_MARKS[item.status]
            content = visible_block(item.content)  # the model's words
            self.line(Text.assemble(("  " + mark + " ", style), (content, style)))

    def _on_architect_step(self, event: ArchitectStep) -> None:
        style = {"started": "magenta", "completed": "green"}.get(event.status, "red")
        where = f" {event.file}" if event.file else ""
        self.line(f"Step {event.index}/{event.total}{where}: {event.status}", style=style)

    def _on_context_compacted(self, event: ContextCompacted) -> None:
        if event.fallback:
            self.line(f"context: {event.fallback}", style="yellow")
        else:
            self.line(
                f"context: {event.summarised_messages} older message(s) summarised by "
                f"{event.model} (~{event.tokens_before} -> ~{event.tokens_after} tokens; "
                "the thread keeps them all)",
                style="dim",
            )

    def _on_background_command(self, event: BackgroundCommandChanged) -> None:
        if event.change == "exited":  # a kill is said by whoever killed it (/shells kill)
            command = visible_block(event.command)[:120]
            self.line(f"background {event.command_id} exited with code {event.exit_code}: "
                      f"{command}", style="dim")  # fmt: skip

    def _on_mode_changed(self, event: ModeChanged) -> None:
        self.line(f"mode: {event.mode}", style="magenta")

    def _on_permission_mode_changed(self, event: PermissionModeChanged) -> None:
        self.permission_mode(event.permission_mode)

    def permission_mode(self, mode: str) -> None:
        said = PERMISSION_MODE_LINES.get(mode, "")
        self.line(f"permission mode: {mode}{said}", style="magenta")

    def history(self, messages: list[Any]) -> None:
        """The conversation so far, one line per message (for /history and resume)."""
        for message in messages:
            role = message.role
            if role == "tool":
                style = "red" if getattr(message, "is_error", False) else "dim"
                self.line(f"  ⎿ {message.tool_name}: {preview(message.content)}", style=style)
                continue
            if message.content:
                label = {"user": "you", "assistant": "loom", "system": "system"}.get(role, role)
                text, more = fold_message(message.content)
                if role == "assistant" and self.markdown and self.console.is_terminal:
                    self.line(Text(f"{label}:", style="bold"))  # as the answer looked
                    self._print_markdown(text)
                else:
                    self.line(Text.assemble((f"{label}: ", "bold"), visible_block(text)))
                if more:
                    self.line(f"  … {more:,} more characters (`loom show` has them)", style="dim")
            for call in getattr(message, "tool_calls", None) or []:
                shown = present_call(self.tools, call.tool_name, call.arguments_json)
                described = describe_call(call.tool_name, call.arguments_json, shown)
                self.line(f"● {described}", style="cyan")
