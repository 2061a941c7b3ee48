"""OpenAI Chat Completions adapter over the official `openai` SDK (imported lazily).

`OpenAICompatibleProvider` is the same adapter pointed at any base URL (Ollama, vLLM,
llama.cpp, OpenRouter): the key is optional and it sends the older `max_tokens` field,
which those servers understand.
"""

from __future__ import annotations

import json
import uuid
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


def to_openai_messages(system: str, messages: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        if isinstance(message, ToolMessage):
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": message.tool_call_id,
                    "content": message.content or "(empty)",
                }
            )
        elif isinstance(message, AssistantMessage):
            if not message.content and not message.tool_calls:
                continue
            entry: dict[str, Any] = {"role": "assistant", "content": message.content or None}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {
                            "name": call.tool_name,
                            "arguments": json.dumps(call.arguments_json),
                        },
                    }
                    for call in message.tool_calls
                ]
            out.append(entry)
        else:
            out.append({"role": "user", "content": message.content})
    return out


class OpenAIProvider:
    name = "openai"
    _key_hint = "OPENAI_API_KEY"
    _max_tokens_field = "max_completion_tokens"

    def __init__(
        self, *, api_key: str | None, base_url: str | None = None, timeout: float = 600.0
    ) -> None:
        import openai

        self._client = openai.AsyncOpenAI(
            api_key=api_key or "not-needed",
            base_url=base_url,
            max_retries=0,
            timeout=timeout,
            http_client=guarded_async_client(timeout),
        )
        self.endpoint = str(self._client.base_url)

    def _params(self, request: LlmRequest) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": request.model,
            "messages": to_openai_messages(
                system_prompt(request), paired_history(request.messages)
            ),
            self._max_tokens_field: request.max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            params["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters,
                    },
                }
                for t in request.tools
            ]
        if request.temperature is not None:
            params["temperature"] = request.temperature
        return params

    def stream(self, request: LlmRequest) -> AsyncIterator[StreamEvent]:
        def open_stream() -> Any:
            return self._client.chat.completions.create(**self._params(request))

        return sdk_stream(
            open_stream,
            self._consume,
            provider=self.name,
            endpoint=self.endpoint,
            key_hint=self._key_hint,
        )

    async def _consume(self, chunks: Any) -> AsyncIterator[StreamEvent]:
        usage = Usage()
        calls: dict[int, list[str]] = {}  # index -> [id, name, argument fragments...]
        finish: str | None = None
        seen_chunk = False
        async for chunk in chunks:
            seen_chunk = seen_chunk or getattr(chunk, "choices", None) is not None
            if getattr(chunk, "usage", None) is not None:
                _set_usage(usage, chunk.usage)
            for choice in chunk.choices or ():
                delta = choice.delta
                if delta is not None and delta.content:
                    yield TextDelta(delta.content)
                for fragment in (delta.tool_calls if delta is not None else None) or ():
                    entry = calls.setdefault(fragment.index or 0, ["", ""])
                    if fragment.id:
                        entry[0] = fragment.id
                    function = fragment.function
                    if function is not None and function.name and not entry[1]:
                        entry[1] = function.name
                    if function is not None and function.arguments:
                        entry.append(function.arguments)
                finish = choice.finish_reason or finish
        if not seen_chunk:
            raise unreadable(
                self.name,
                "no chat completion chunks in the response",
                self.endpoint,
                transient=False,
            )
        if finish is None:
            raise unreadable(self.name, "the stream ended without a finish_reason", self.endpoint)
        for index in sorted(calls):
            call_id, name, *parts = calls[index]
            yield ToolCallReady(
                ToolCall(
                    id=call_id or f"call_{uuid.uuid4().hex[:24]}",
                    tool_name=name,
                    arguments_json=parse_tool_arguments("".join(parts)),
                )
            )
        yield UsageReport(usage)
        yield StreamEnd(normalize_stop_reason(finish, has_tool_calls=bool(calls)))


class OpenAICompatibleProvider(OpenAIProvider):
    name = "openai-compatible"
    _key_hint = "OPENAI_COMPATIBLE_API_KEY"
    _max_tokens_field = "max_tokens"


def _set_usage(usage: Usage, reported: Any) -> None:
    """OpenAI counts cached prompt tokens inside prompt_tokens; we report them apart."""
    details = getattr(reported, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or 0
    usage.input_tokens = max(0, (reported.prompt_tokens or 0) - cached)
    usage.output_tokens = reported.completion_tokens or 0
    usage.cache_read_tokens = cached or None
