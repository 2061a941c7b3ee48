"""Gemini adapter over the official `google-genai` SDK (imported lazily).

Gemini sends each function call whole (no argument fragments) and may omit call ids;
we give those calls ids so results can be paired. Gemini 3 attaches a
`thought_signature` to function-call parts that must be sent back with the history;
it is kept on the ToolCall (base64, an extra field the thread file preserves).
"""

from __future__ import annotations

import base64
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
)
from loom.llm.guard import guarded_async_client

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/"


def to_gemini_contents(messages: list[Message]) -> list[dict[str, Any]]:
    """Our history -> Gemini `contents` (dicts in the SDK's snake_case field names)."""
    out: list[dict[str, Any]] = []

    def add(role: str, parts: list[dict[str, Any]]) -> None:
        if out and out[-1]["role"] == role:
            out[-1]["parts"].extend(parts)
        else:
            out.append({"role": role, "parts": parts})

    for message in messages:
        if isinstance(message, ToolMessage):
            key = "error" if message.is_error else "result"
            add(
                "user",
                [
                    {
                        "function_response": {
                            "id": message.tool_call_id,
                            "name": message.tool_name,
                            "response": {key: message.content},
                        }
                    }
                ],
            )
        elif isinstance(message, AssistantMessage):
            parts: list[dict[str, Any]] = [{"text": message.content}] if message.content else []
            for call in message.tool_calls:
                part: dict[str, Any] = {
                    "function_call": {
                        "id": call.id,
                        "name": call.tool_name,
                        "args": call.arguments_json,
                    }
                }
                signature = getattr(call, "thought_signature", None)
                if isinstance(signature, str):
                    part["thought_signature"] = base64.b64decode(signature)
                parts.append(part)
            if parts:
                add("model", parts)
        elif message.content:
            add("user", [{"text": message.content}])
    return out


class GoogleProvider:
    name = "google"

    def __init__(
        self, *, api_key: str | None, base_url: str | None = None, timeout: float = 600.0
    ) -> None:
        from google import genai
        from google.genai import types

        self.endpoint = base_url or DEFAULT_BASE_URL
        options = types.HttpOptions(
            base_url=base_url,
            timeout=int(timeout * 1000),
            retry_options=None,
            httpx_async_client=guarded_async_client(timeout),
        )
        self._client = genai.Client(api_key=api_key, http_options=options)
        self._types = types

    def _config(self, request: LlmRequest) -> Any:
        types = self._types
        config: dict[str, Any] = {
            "max_output_tokens": request.max_tokens,
            "automatic_function_calling": {"disable": True},
        }
        system = system_prompt(request)
        if system:
            config["system_instruction"] = system
        if request.tools:
            config["tools"] = [
                {
                    "function_declarations": [
                        {
                            "name": t.name,
                            "description": t.description,
                            "parameters_json_schema": t.parameters,
                        }
                        for t in request.tools
                    ]
                }
            ]
        if request.temperature is not None:
            config["temperature"] = request.temperature
        return types.GenerateContentConfig(**config)

    def stream(self, request: LlmRequest) -> AsyncIterator[StreamEvent]:
        def open_stream() -> Any:
            return self._client.aio.models.generate_content_stream(
                model=request.model,
                contents=to_gemini_contents(paired_history(request.messages)),
                config=self._config(request),
            )

        return sdk_stream(
            open_stream,
            self._consume,
            provider=self.name,
            endpoint=self.endpoint,
            key_hint="GEMINI_API_KEY or GOOGLE_API_KEY",
        )

    async def _consume(self, chunks: Any) -> AsyncIterator[StreamEvent]:
        usage = Usage()
        calls = 0
        finish: str | None = None
        seen_candidate = False
        async for chunk in chunks:
            if chunk.usage_metadata is not None:
                _set_usage(usage, chunk.usage_metadata)
            for candidate in chunk.candidates or ():
                seen_candidate = True
                if candidate.finish_reason is not None:
                    finish = getattr(candidate.finish_reason, "value", str(candidate.finish_reason))
                for part in (candidate.content.parts if candidate.content else None) or ():
                    if part.text and not part.thought:
                        yield TextDelta(part.text)
                    elif part.function_call is not None:
                        calls += 1
                        yield ToolCallReady(_tool_call(part))
        if not seen_candidate:
            raise unreadable(
                self.name, "no candidates in the response", self.endpoint, transient=False
            )
        yield UsageReport(usage)
        yield StreamEnd(normalize_stop_reason(finish, has_tool_calls=calls > 0))


def _tool_call(part: Any) -> ToolCall:
    function_call = part.function_call
    extra: dict[str, Any] = {}
    if part.thought_signature:
        extra["thought_signature"] = base64.b64encode(part.thought_signature).decode()
    return ToolCall(
        id=function_call.id or f"call_{uuid.uuid4().hex[:24]}",
        tool_name=function_call.name or "",
        arguments_json=dict(function_call.args or {}),
        **extra,
    )


def _set_usage(usage: Usage, reported: Any) -> None:
    """Gemini counts cached tokens inside the prompt count and thinking apart from output."""
    cached = reported.cached_content_token_count or 0
    usage.input_tokens = max(0, (reported.prompt_token_count or 0) - cached)
    usage.output_tokens = (reported.candidates_token_count or 0) + (
        reported.thoughts_token_count or 0
    )
    usage.cache_read_tokens = cached or None
