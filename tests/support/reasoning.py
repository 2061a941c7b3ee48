"""Tool rounds with reasoning, for the adapters' tests against the fake server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from loom.core.messages import AssistantMessage, Message, ToolMessage
from loom.llm.base import LlmRequest, LlmResponse, ToolSpec

READ = ToolSpec("file_read", "Read a file.", {"type": "object", "properties": {}})


def tool_request(model: str, messages: list[Message], **fields: Any) -> LlmRequest:
    """A request with the file_read tool (and `fields`: effort, cache_key, ...)."""
    return LlmRequest(model=model, messages=messages, system="sys", tools=(READ,), **fields)


def answered(history: list[Message], response: LlmResponse) -> list[Message]:
    """`history` with the response (its reasoning kept) and a result for each call."""
    reply = AssistantMessage(
        content=response.content, tool_calls=response.tool_calls, reasoning=response.reasoning
    )
    results = [
        ToolMessage(tool_call_id=c.id, tool_name=c.tool_name, content=f"read {c.arguments_json}")
        for c in response.tool_calls
    ]
    return [*history, reply, *results]


async def replay(events: list[Any]) -> AsyncIterator[Any]:
    """Events already read, as a stream again (to `collect` them)."""
    for event in events:
        yield event
