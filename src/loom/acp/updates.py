"""Loom's session events and thread messages as ACP `session/update` payloads.

Pure functions: each takes Loom data and returns the SDK's update models, so the mapping
is tested without a connection. Tool calls go pending (the model asked) -> in_progress
(running) -> completed | failed; edits carry a `diff`, shell calls their output.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from acp.schema import (
    AgentMessageChunk,
    Cost,
    PlanEntry,
    TextContentBlock,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
    ToolCallUpdate,
    UsageUpdate,
    UserMessageChunk,
)

from acp import helpers
from loom.core.messages import AssistantMessage, Message, ToolMessage, UserMessage
from loom.session import ToolPresentation, present_call

MAX_OUTPUT_CHARS = 20_000  # a tool's output shown in the editor; the model gets it whole


def locations(root: Path, shown: ToolPresentation) -> list[ToolCallLocation] | None:
    if not shown.path:
        return None
    return [ToolCallLocation(path=str((root / shown.path).resolve()))]


def text_content(text: str) -> Any:
    if len(text) > MAX_OUTPUT_CHARS:
        text = text[:MAX_OUTPUT_CHARS] + f"\n… ({len(text) - MAX_OUTPUT_CHARS} more characters)"
    return helpers.tool_content(helpers.text_block(text))


def diff_content(root: Path, path: str, old: str | None, new: str) -> Any:
    return helpers.tool_diff_content(str((root / path).resolve()), new, old)


def call_started(
    call_id: str,
    shown: ToolPresentation,
    args: dict[str, Any],
    root: Path,
    status: ToolCallStatus = "pending",
) -> ToolCallStart:
    """A call the model made, shown as its tool presents it (`present_call`)."""
    return ToolCallStart(
        session_update="tool_call",
        tool_call_id=call_id,
        title=shown.title,
        kind=shown.kind,
        status=status,
        locations=locations(root, shown),
        raw_input=args,
    )


def call_progress(
    call_id: str, status: ToolCallStatus, content: list[Any] | None = None, raw_output: Any = None
) -> ToolCallProgress:
    return ToolCallProgress(
        session_update="tool_call_update",
        tool_call_id=call_id,
        status=status,
        content=content,
        raw_output=raw_output,
    )


def permission_call(
    call_id: str,
    shown: ToolPresentation,
    args: dict[str, Any],
    root: Path,
    content: list[Any] | None,
) -> ToolCallUpdate:
    return ToolCallUpdate(
        tool_call_id=call_id,
        title=shown.title,
        kind=shown.kind,
        status="pending",
        content=content,
        locations=locations(root, shown),
        raw_input=args,
    )


def background_call_id(command_id: str) -> str:
    return f"background-{command_id}"


def background(command_id: str, command: str, change: str, exit_code: int | None) -> Any:
    """A background command as a tool call of its own (ACP has no other place for a process
    that outlives the call that started it): in_progress from its start, then completed
    (exit 0) or failed (another exit, killed). Client terminals (`terminal/create`) would
    run the command on the editor's side, outside Loom's sandbox, so they are not used."""
    call_id = background_call_id(command_id)
    if change == "started":
        return ToolCallStart(
            session_update="tool_call",
            tool_call_id=call_id,
            title=f"{command} (background {command_id})",
            kind="execute",
            status="in_progress",
            raw_input={"command": command, "id": command_id},
        )
    if change == "output_ended":
        return call_progress(call_id, "in_progress", [text_content("(its output ended)")])
    said = f"killed: {command}" if change == "killed" else f"exited with code {exit_code}"
    status: ToolCallStatus = "completed" if change == "exited" and exit_code == 0 else "failed"
    raw = {"id": command_id, "state": change, "exit_code": exit_code}
    return call_progress(call_id, status, [text_content(f"[{command_id} {said}]")], raw)


def agent_text(text: str) -> AgentMessageChunk:
    return helpers.update_agent_message_text(text)


def agent_thought(text: str) -> Any:
    """The model's readable reasoning as an `agent_thought_chunk`."""
    return helpers.update_agent_thought_text(text)


def user_text(text: str) -> UserMessageChunk:
    return helpers.update_user_message_text(text)


def plan(steps: list[dict[str, str]], done: dict[int, str]) -> Any:
    """`done`: 1-based step index -> its status (started/completed/failed/interrupted)."""
    entries = []
    for number, step in enumerate(steps, start=1):
        status = done.get(number)
        text = step.get("description") or step.get("action") or f"step {number}"
        if step.get("file"):
            text = f"{text} ({step['file']})"
        entries.append(
            PlanEntry(
                content=text,
                priority="medium",
                status="completed"
                if status in ("completed", "failed", "interrupted")
                else "in_progress"
                if status == "started"
                else "pending",
            )
        )
    return helpers.update_plan(entries)


def todo_plan(todos: list[Any]) -> Any:
    """The agent's todo list (or an architect plan's progress) as ACP's `plan` update:
    the whole list each time, as the protocol replaces the plan it shows."""
    entries = [
        PlanEntry(content=item.content, priority="medium", status=item.status) for item in todos
    ]
    return helpers.update_plan(entries)


def usage(used: int, size: int, cost: float | None) -> UsageUpdate:
    return UsageUpdate(
        session_update="usage_update",
        used=max(0, used),
        size=max(0, size),
        cost=Cost(amount=cost, currency="USD") if cost is not None else None,
    )


def replay(messages: list[Message], root: Path, tools: Any = None) -> Iterator[Any]:
    """The whole conversation as updates, in order (for `session/load`); `tools` is the
    session's ToolRegistry (how each tool shows its calls)."""
    calls: dict[str, str] = {}
    for message in messages:
        if isinstance(message, UserMessage):
            if message.content:
                yield user_text(message.content)
        elif isinstance(message, AssistantMessage):
            for part in message.reasoning or ():  # readable reasoning; opaque parts never
                if part.text:
                    yield agent_thought(part.text)
            if message.content:
                yield agent_text(message.content)
            for call in message.tool_calls:
                calls[call.id] = call.tool_name
                shown = present_call(tools, call.tool_name, call.arguments_json)
                yield call_started(call.id, shown, call.arguments_json, root)
        elif isinstance(message, ToolMessage):
            failed = bool(getattr(message, "is_error", False))
            yield call_progress(
                message.tool_call_id,
                "failed" if failed else "completed",
                [text_content(message.content)] if message.content else None,
            )


def prompt_text(blocks: list[Any]) -> str:
    """An ACP prompt as the text Loom sends: text blocks as they are, embedded files as
    fenced context with their path, links as a line naming them."""
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if isinstance(block, TextContentBlock) or kind == "text":
            parts.append(block.text)
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if text is None:
                parts.append(f"[attached binary resource {resource.uri} was not included]")
            else:
                parts.append(f"<file uri={json.dumps(resource.uri)}>\n{text}\n</file>")
        elif kind == "resource_link":
            parts.append(f"[see {block.uri}]")
        elif kind == "image":
            parts.append("[an image was attached; this model does not take images]")
        elif kind == "audio":
            parts.append("[an audio clip was attached; Loom does not take audio]")
    return "\n\n".join(p for p in parts if p)
