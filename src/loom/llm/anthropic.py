"""Anthropic Messages API adapter over the official `anthropic` SDK (imported lazily)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from loom.core.messages import AssistantMessage, Message, ToolCall, ToolMessage, Usage
from loom.llm._convert import normalize_stop_reason, paired_history, system_prompt
from loom.llm._errors import sdk_stream, unreadable
from loom.llm.base import (
    LlmRequest,
    StreamEnd,
    StreamEvent,
    TextDelta,
    ToolCallReady,
    UsageReport,
    parse_tool_arguments,
)
from loom.llm.guard import guarded_async_client


def to_anthropic_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Our history -> Anthropic `messages`; tool results ride in the next user turn."""
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if out and out[-1]["role"] == role:  # the API wants roles to alternate
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for message in messages:
        if isinstance(message, ToolMessage):
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id,
                "content": message.content or "(empty)",
            }
            if message.is_error:
                block["is_error"] = True
            add("user", [block])
        elif isinstance(message, AssistantMessage):
            blocks: list[dict[str, Any]] = []
            if message.content:
                blocks.append({"type": "text", "text": message.content})
            blocks += [
                {
                    "type": "tool_use",
                    "id": call.id,
                    "name": call.tool_name,
                    "input": call.arguments_json,
                }
                for call in message.tool_calls
            ]
            if blocks:
                add("assistant", blocks)
        elif message.content:
            add("user", [{"type": "text", "text": message.content}])
    return out


class AnthropicProvider:
    name = "anthropic"

    def __init__(
        self,
        *,
        api_key: str | None,
        base_url: str | None = None,
        timeout: float = 600.0,
        bearer: bool = False,
    ) -> None:
        import anthropic

        credentials = {"auth_token": api_key} if bearer else {"api_key": api_key}
        self._client = anthropic.AsyncAnthropic(
            **credentials,
            base_url=base_url,
            max_retries=0,
            timeout=timeout,
            http_client=guarded_async_client(timeout),
        )
        self.endpoint = str(self._client.base_url)

    def _params(self, request: LlmRequest) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens,
            "messages": to_anthropic_messages(paired_history(request.messages)),
        }
        system = system_prompt(request)
        if system:
            params["system"] = system
        if request.tools:
            params["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters}
                for t in request.tools
            ]
        if request.temperature is not None:
            params["temperature"] = request.temperature
        return params

    def stream(self, request: LlmRequest) -> AsyncIterator[StreamEvent]:
        def open_stream() -> Any:
            return self._client.messages.create(**self._params(request), stream=True)

        return sdk_stream(
            open_stream,
            self._consume,
            provider=self.name,
            endpoint=self.endpoint,
            key_hint="ANTHROPIC_API_KEY",
        )

    async def _consume(self, events: Any) -> AsyncIterator[StreamEvent]:
        usage = Usage()
        tool_blocks: dict[int, tuple[str, str, list[str]]] = {}  # index -> id, name, json parts
        calls = 0
        stop_reason: str | None = None
        started = finished = False
        async for event in events:
            kind = getattr(event, "type", None)
            if kind == "message_start":
                started = True
                _update_usage(usage, event.message.usage)
            elif kind == "content_block_start" and event.content_block.type == "tool_use":
                block = event.content_block
                tool_blocks[event.index] = (block.id, block.name, [])
            elif kind == "content_block_delta":
                delta = event.delta
                if delta.type == "text_delta" and delta.text:
                    yield TextDelta(delta.text)
                elif delta.type == "input_json_delta" and event.index in tool_blocks:
                    tool_blocks[event.index][2].append(delta.partial_json)
            elif kind == "content_block_stop" and event.index in tool_blocks:
                call_id, name, parts = tool_blocks.pop(event.index)
                calls += 1
                yield ToolCallReady(
                    ToolCall(
                        id=call_id,
                        tool_name=name,
                        arguments_json=parse_tool_arguments("".join(parts)),
                    )
                )
            elif kind == "message_delta":
                stop_reason = event.delta.stop_reason or stop_reason
                _update_usage(usage, event.usage)
            elif kind == "message_stop":
                finished = True
        if not started:
            raise unreadable(
                self.name, "no Messages API events in the response", self.endpoint, transient=False
            )
        if not finished:
            raise unreadable(self.name, "the stream ended before message_stop", self.endpoint)
        yield UsageReport(usage)
        yield StreamEnd(normalize_stop_reason(stop_reason, has_tool_calls=calls > 0))


def _update_usage(usage: Usage, reported: Any) -> None:
    """message_start carries input counts; message_delta carries cumulative output."""
    if reported is None:
        return
    if getattr(reported, "input_tokens", None):
        usage.input_tokens = reported.input_tokens
    if getattr(reported, "output_tokens", None):
        usage.output_tokens = reported.output_tokens
    if getattr(reported, "cache_read_input_tokens", None):
        usage.cache_read_tokens = reported.cache_read_input_tokens
    if getattr(reported, "cache_creation_input_tokens", None):
        usage.cache_write_tokens = reported.cache_creation_input_tokens
