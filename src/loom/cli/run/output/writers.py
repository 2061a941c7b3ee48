"""Render a headless run: final text, one JSON result, or one JSON event per line.

stream-json lines, in the shape of Claude Code's stream-json:
  {"type":"system","subtype":"init","session_id","tools","model","cwd",...,"context"}
      first line; "context": where the window goes (model, window, parts, suggestion)
  {"type":"user","message":{"role":"user","content":[{"type":"text","text"}]}} the prompt
  {"type":"assistant","message":{"role":"assistant","content":[text, tool_use...]}}
  {"type":"user","message":{"role":"user","content":[{"type":"tool_result",...}]}}
  {"type":"stream_event","event":{"type":"content_block_delta",...}}  with partial messages
  {"type":"system","subtype":"api_retry","attempt","retry_delay_ms","error"}  a retried call
  {"type":"loom.permission_denial","tool_name","tool_use_id","tool_input"}  after a refused
      call's tool_result: the entry the result's `permission_denials` will list
  {"type":"result","subtype":"success"|"error_max_turns"|"error_during_execution",...}  last
Loom's other events (tool_executing, tool_progress, tool_complete, permission_request,
session_status, mode_changed, error, sync_error) are lines of type "loom.<event>" carrying
the event's own fields, so a Claude Code reader skips them and a Loom reader sees everything.
JSON lines escape what a terminal would act on (C0 and C1 controls, bidi characters) as
`\\u` escapes, so `cat`-ing them is safe and the data is the same.
"""

from __future__ import annotations

import io
import json
import os
from typing import Any, Protocol, TextIO, assert_never

from loom.cli.run.output.result import RunResult, denial, is_refusal
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
from loom.core.text import json_visible, visible_block


class OutputWriter(Protocol):
    reader_gone: bool

    def start(self, init: dict[str, Any]) -> None: ...
    def event(self, event: SessionEvent) -> None: ...
    def finish(self, result: RunResult) -> None: ...


class _Writer:
    """Writes lines; when the reader goes away (`loom run ... | head -1`) it stops
    writing and says so in `reader_gone`, instead of raising from an event callback."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.reader_gone = False

    def _write(self, text: str) -> None:
        if self.reader_gone:
            return
        try:
            self.out.write(text)
            self.out.flush()  # a reader acts on each line as it comes
        except BrokenPipeError:
            self.reader_gone = True
            _silence(self.out)

    def start(self, init: dict[str, Any]) -> None:
        pass

    def event(self, event: SessionEvent) -> None:
        pass


class TextWriter(_Writer):
    """Prints the final answer, nothing else (errors go to stderr from the caller): as
    text, its control characters and escape sequences shown as escapes (`\\x1b`); `-o
    json` has the exact text."""

    def finish(self, result: RunResult) -> None:
        if result.result:
            self._write(visible_block(result.result.rstrip("\n")) + "\n")


class JsonWriter(_Writer):
    """Prints one result object when the run ends (with the init's `context`: where the
    window went at the start, as stream-json's init line has it)."""

    _context: Any = None

    def start(self, init: dict[str, Any]) -> None:
        self._context = init.get("context")

    def finish(self, result: RunResult) -> None:
        data = result.to_dict()
        if self._context is not None:
            data["context"] = self._context
        self._write(json_visible(json.dumps(data, ensure_ascii=False)) + "\n")


class StreamJsonWriter(_Writer):
    def __init__(self, out: TextIO, *, partial_messages: bool = False) -> None:
        super().__init__(out)
        self.partial_messages = partial_messages
        self._calls: dict[str, Any] = {}  # tool call id -> the call, for refusals

    def _line(self, data: dict[str, Any]) -> None:
        self._write(json_visible(json.dumps(data, ensure_ascii=False)) + "\n")

    def start(self, init: dict[str, Any]) -> None:
        self._line({"type": "system", "subtype": "init", **init})

    def event(self, event: SessionEvent) -> None:
        line = stream_json_line(event, partial_messages=self.partial_messages)
        if line is not None:
            self._line(line)
        if isinstance(event, NewMessage):
            message = event.message
            if isinstance(message, AssistantMessage):
                self._calls.update((call.id, call) for call in message.tool_calls)
            elif (
                isinstance(message, ToolMessage)
                and is_refusal(message)
                and (message.tool_call_id in self._calls)
            ):
                entry = denial(self._calls[message.tool_call_id])
                self._line({"type": "loom.permission_denial", **entry,
                            "session_id": event.session_id})  # fmt: skip

    def finish(self, result: RunResult) -> None:
        self._line(result.to_dict())


def _silence(out: TextIO) -> None:
    """Point a closed pipe's descriptor at /dev/null, so the flush at exit cannot fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, out.fileno())
        os.close(devnull)
    except (OSError, ValueError, io.UnsupportedOperation):
        pass  # not a real file (tests): nothing is flushed at exit


def stream_json_line(
    event: SessionEvent, *, partial_messages: bool = False
) -> dict[str, Any] | None:
    """One session event as a stream-json line, or None when it has no line. Every event
    type has a case: basedpyright fails on one without (`assert_never`)."""
    session_id = event.session_id
    match event:
        case NewMessage():
            return _message_line(event.message, session_id)
        case TextDeltaEvent() | ThinkingDeltaEvent():
            if not partial_messages:
                return None
            piece = (
                {"type": "text_delta", "text": event.text}
                if isinstance(event, TextDeltaEvent)
                else {"type": "thinking_delta", "thinking": event.text}
            )
            delta = {"type": "content_block_delta", "index": 0, "delta": piece}
            return {
                "type": "stream_event",
                "event": delta,
                "parent_tool_use_id": None,
                "session_id": session_id,
            }
        case LlmRetry():
            return {
                "type": "system",
                "subtype": "api_retry",
                "attempt": event.attempt,
                "retry_delay_ms": round(event.delay_seconds * 1000),
                "error": event.error,
                "session_id": session_id,
            }
        case TurnComplete():
            return None  # the result line says it
        case SubagentMessage():  # Claude Code's shape: under the task call
            line = _message_line(event.message, session_id)
            if line is not None:
                line["parent_tool_use_id"] = event.call_id
            return line
        case (
            SessionStatus()
            | ToolExecuting()
            | ToolProgress()
            | ToolComplete()
            | PermissionRequest()
            | ModeChanged()
            | PermissionModeChanged()
            | SessionError()
            | ArchitectPlan()
            | ArchitectStep()
            | SyncError()
            | FilesRestored()
            | ConversationRewound()
            | ContextCompacted()
            | DecisionCascade()
            | TodoList()
            | Notice()
            | SubagentStatus()
            | BackgroundCommandChanged()
        ):  # Loom's own: "loom.<type>" with the event's fields
            data = event.model_dump(mode="json")
            return {**data, "type": f"loom.{data['type']}"}
        case _:
            assert_never(event)


def _message_line(message: Any, session_id: str) -> dict[str, Any] | None:
    if isinstance(message, AssistantMessage):
        # readable reasoning first, as Claude Code prints it; opaque parts never
        content: list[dict[str, Any]] = [
            {"type": "thinking", "thinking": part.text}
            for part in message.reasoning or ()
            if part.text
        ]
        if message.content:
            content.append({"type": "text", "text": message.content})
        for call in message.tool_calls:
            content.append(
                {
                    "type": "tool_use",
                    "id": call.id,
                    "name": call.tool_name,
                    "input": call.arguments_json,
                }
            )
        body: dict[str, Any] = {
            "id": message.id,
            "type": "message",
            "role": "assistant",
            "model": message.model,
            "content": content,
            "stop_reason": message.stop_reason,
        }
        if message.usage is not None:
            body["usage"] = {  # Claude Code's names for the cache's part
                "input_tokens": message.usage.input_tokens,
                "cache_read_input_tokens": message.usage.cache_read_tokens or 0,
                "cache_creation_input_tokens": message.usage.cache_write_tokens or 0,
                "output_tokens": message.usage.output_tokens,
            }
            if message.usage.reasoning_tokens:
                body["usage"]["reasoning_tokens"] = message.usage.reasoning_tokens
        return {
            "type": "assistant",
            "message": body,
            "parent_tool_use_id": None,
            "session_id": session_id,
        }
    if isinstance(message, ToolMessage):
        block = {
            "type": "tool_result",
            "tool_use_id": message.tool_call_id,
            "content": message.content,
            "is_error": bool(message.is_error),
        }
        return {
            "type": "user",
            "message": {"role": "user", "content": [block]},
            "parent_tool_use_id": None,
            "session_id": session_id,
        }
    if isinstance(message, UserMessage):
        block = {"type": "text", "text": message.content}
        return {
            "type": "user",
            "message": {"role": "user", "content": [block]},
            "parent_tool_use_id": None,
            "session_id": session_id,
        }
    return None  # system messages are Loom's own business
