"""ScriptedProvider: a Provider that plays back a script, for tests and benchmarks.

    provider = ScriptedProvider([
        tool_turn("file_read", {"path": "a.py"}),
        "All done.",                                  # a plain text answer
        ScriptedTurn(error=LlmError("busy", transient=True, status=529)),
        lambda request: ScriptedTurn(text=f"{len(request.messages)} messages"),
    ])

Each call to `stream` takes the next entry. Text is streamed in `chunk_size` pieces,
tool calls follow, then usage and the stop reason. `delay` sleeps before the first
event (and `chunk_delay` between chunks), so tests can interrupt mid-stream. Every
request is kept in `requests` for assertions. Running out of script is a permanent
LlmError that says so, never a hang.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from loom.core.ids import new_call_id
from loom.core.messages import ToolCall, Usage
from loom.llm.base import (
    LlmError,
    LlmRequest,
    StreamEnd,
    StreamEvent,
    TextDelta,
    ToolCallReady,
    UsageReport,
)


@dataclass
class ScriptedTurn:
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    error: BaseException | None = None  # raised instead of (or after `text_before_error`)
    text_before_error: bool = False  # stream the text first, then fail mid-stream
    delay: float = 0.0
    chunk_size: int = 16
    chunk_delay: float = 0.0
    usage: Usage | None = None
    stop_reason: str | None = None


ScriptEntry = ScriptedTurn | str | Callable[[LlmRequest], "ScriptedTurn | str"]


def tool_call(
    name: str, arguments: dict[str, Any] | None = None, id: str | None = None
) -> ToolCall:
    return ToolCall(id=id or new_call_id(), tool_name=name, arguments_json=arguments or {})


def tool_turn(
    name: str, arguments: dict[str, Any] | None = None, *, text: str = "", id: str | None = None
) -> ScriptedTurn:
    """A response that asks for one tool call."""
    return ScriptedTurn(text=text, tool_calls=[tool_call(name, arguments, id)])


class ScriptedProvider:
    name = "scripted"

    def __init__(self, script: Iterable[ScriptEntry] = (), *, name: str = "scripted") -> None:
        self.name = name
        self._script: list[ScriptEntry] = list(script)
        self._next = 0
        self.requests: list[LlmRequest] = []

    def add(self, *entries: ScriptEntry) -> None:
        self._script.extend(entries)

    @property
    def remaining(self) -> int:
        return len(self._script) - self._next

    def stream(self, request: LlmRequest) -> AsyncIterator[StreamEvent]:
        return self._play(request)

    async def _play(self, request: LlmRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        if self._next >= len(self._script):
            raise LlmError(
                f"the scripted provider has no response left (it had {len(self._script)}); "
                "add more entries to the script",
                transient=False,
                provider=self.name,
            )
        entry = self._script[self._next]
        self._next += 1
        turn = entry(request) if callable(entry) else entry
        if isinstance(turn, str):
            turn = ScriptedTurn(text=turn)
        if turn.delay:
            await asyncio.sleep(turn.delay)
        if turn.error is not None and not turn.text_before_error:
            raise turn.error
        text = turn.text
        size = max(1, turn.chunk_size)
        for start in range(0, len(text), size):
            if turn.chunk_delay and start:
                await asyncio.sleep(turn.chunk_delay)
            yield TextDelta(text[start : start + size])
        if turn.error is not None:
            raise turn.error
        for call in turn.tool_calls:
            yield ToolCallReady(call)
        # A token-ish figure that is O(1) per call (summing the history would make long
        # benchmark runs quadratic in the provider, not in the code under test).
        usage = turn.usage or Usage(
            input_tokens=10 * len(request.messages) + 1, output_tokens=len(text) // 4 + 1
        )
        yield UsageReport(usage)
        stop = turn.stop_reason or ("tool_use" if turn.tool_calls else "end_turn")
        yield StreamEnd(stop)
