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

from loom.core.jsonish import is_json_object
from loom.core.messages import AssistantMessage, Message, ToolCall, ToolMessage, Usage
from loom.llm._convert import normalize_stop_reason, system_text
from loom.llm._direct import DirectPost
from loom.llm._errors import sdk_stream, unreadable
from loom.llm._events import count, obj, objs, text
from loom.llm._images import openai_part
from loom.llm._sse import drain, loads, sse_events
from loom.llm._wire import Unit, WireHistory, body, dumps
from loom.llm.base import (
    LlmRequest,
    StreamEnd,
    StreamEvent,
    TextDelta,
    ToolCallReady,
    UsageReport,
    parse_tool_arguments,
)
from loom.llm.catalog import model_info
from loom.llm.clients import client_key, shared_client
from loom.llm.effort import openai_chat_effort
from loom.llm.guard import guarded_async_client


def openai_units(message: Message) -> list[Unit]:
    """One message as a Chat Completions message (encoded once: `loom.llm._wire`)."""
    if isinstance(message, ToolMessage):
        return _tool_units(message)
    if isinstance(message, AssistantMessage):
        if not message.content and not message.tool_calls:
            return []
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
    elif getattr(message, "images", None):  # Chat Completions: images in user messages only
        parts = [openai_part(ref) for ref in message.images]  # type: ignore[union-attr]
        if message.content:
            parts.insert(0, {"type": "text", "text": message.content})
        entry = {"role": "user", "content": parts}
    else:
        entry = {"role": "user", "content": message.content}
    return [(None, dumps(entry))]


_TOOL = "tool"
_IMAGES_AFTER = b'{"role":"user"'  # how an image message of a tool result starts


def _tool_units(message: ToolMessage) -> list[Unit]:
    """A tool result, and the images it read as a user message: Chat Completions takes
    images only in user messages, and a user message may not stand between two results
    of one answer, so `_tool_run` puts the images after the answer's last result."""
    entry = {"role": "tool", "tool_call_id": message.tool_call_id,
             "content": message.content or "(empty)"}  # fmt: skip
    units: list[Unit] = [(_TOOL, dumps(entry))]
    if message.images:
        note = f"[Loom: the image(s) of tool call {message.tool_call_id}'s result]"
        parts = [{"type": "text", "text": note}, *(openai_part(ref) for ref in message.images)]
        units.append((_TOOL, dumps({"role": "user", "content": parts})))
    return units


def _tool_run(role: str, pieces: list[bytes]) -> bytes:
    """The results of one answer's calls, then their images: several wire messages,
    joined as `loom.llm._wire.body` joins the array's items."""
    if role != _TOOL:
        raise AssertionError(f"OpenAI merges only tool results, not {role!r}")
    results = [piece for piece in pieces if not piece.startswith(_IMAGES_AFTER)]
    images = [piece for piece in pieces if piece.startswith(_IMAGES_AFTER)]
    return b",".join(results + images)


_POST_OPTIONS: dict[str, Any] = {"security": {"bearer_auth": True}}


def openai_client(api_key: str | None, base_url: str | None, timeout: float) -> Any:
    """The SDK's async client for this key and endpoint, shared (Chat Completions and
    the Responses API alike)."""

    def build() -> Any:
        import openai

        return openai.AsyncOpenAI(
            api_key=api_key or "not-needed",
            base_url=base_url,
            max_retries=0,
            timeout=timeout,
            http_client=guarded_async_client(timeout),
        )

    return shared_client(client_key("openai", base_url, api_key, timeout), build)


def _refuse_responses_only(provider: str, model: str) -> None:
    """A model the catalog knows to be served only by the Responses API (codex, pro) is
    not sent to Chat Completions: the API would answer 404; this says what to set."""
    from loom.llm.base import LlmError
    from loom.llm.catalog import model_info

    if model_info(provider, model).needs_responses:
        raise LlmError(
            f"{provider}:{model} is served only by the Responses API, not Chat Completions: "
            f'set api = "responses" under [providers.{provider}] in your config (or remove '
            '`api = "chat"`).',
            transient=False,
            status=404,
            provider=provider,
        )


def context_after(request: LlmRequest) -> list[Unit]:
    """The call's context (repo map, decisions, news) as a user message sent after the
    conversation, so the prefix stays the same bytes call after call."""
    if not request.context:
        return []
    return [(None, dumps({"role": "user", "content": request.context}))]


class OpenAIProvider:
    name = "openai"
    _key_hint = "OPENAI_API_KEY"
    _max_tokens_field = "max_completion_tokens"
    _cache_key_field = True  # `prompt_cache_key`: OpenAI's own; other servers may refuse it

    def __init__(
        self, *, api_key: str | None, base_url: str | None = None, timeout: float = 600.0
    ) -> None:
        self._client = openai_client(api_key, base_url, timeout)
        self.endpoint = str(self._client.base_url)
        self.history = WireHistory("openai", openai_units, _tool_run)
        self._post = DirectPost(self._client, "openai", "/chat/completions", _POST_OPTIONS)

    def request_body(self, request: LlmRequest) -> bytes:
        """The JSON body of a streamed Chat Completions request."""
        after = context_after(request)
        wire, system_texts = self.history.encode(request.messages, after=after)
        system = system_text(request.system, system_texts)
        head: dict[str, Any] = {
            "model": request.model,
            "stream": True,
            "stream_options": {"include_usage": True},
            self._max_tokens_field: request.max_tokens,
        }
        if request.tools:
            head["tools"] = [
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
            head["temperature"] = request.temperature
        effort = openai_chat_effort(model_info(self.name, request.model), request.effort)
        if effort is not None:  # Chat Completions: the effort only (no summaries there)
            head["reasoning_effort"] = effort
        if request.cache_key and self._cache_key_field:
            head["prompt_cache_key"] = request.cache_key  # routes the thread to its cache
        if system:
            wire = [dumps({"role": "system", "content": system}), *wire]
        return body(head, "messages", wire)

    def stream(self, request: LlmRequest) -> AsyncIterator[StreamEvent]:
        async def open_stream() -> Any:
            # The bytes are sent as they are, with the request the SDK built once
            # (`loom.llm._direct`); the response's bytes are read by `loom.llm._sse`
            # (the SDK's decoder cost several times a plain read per chunk).
            _refuse_responses_only(self.name, request.model)
            return await self._post.response(self.request_body(request))

        return sdk_stream(
            open_stream,
            self._consume,
            provider=self.name,
            endpoint=self.endpoint,
            key_hint=self._key_hint,
        )

    async def _consume(self, response: Any) -> AsyncIterator[StreamEvent]:
        usage = Usage()
        calls: dict[int, list[str]] = {}  # index -> [id, name, argument fragments...]
        finish: str | None = None
        seen_chunk = False
        async for chunk in _chunks(response):
            chunk = obj(chunk)
            seen_chunk = seen_chunk or isinstance(chunk.get("choices"), list)
            if chunk.get("usage") is not None:
                _set_usage(usage, obj(chunk["usage"]))
            for choice in objs(chunk.get("choices")):
                delta = obj(choice.get("delta"))
                content = text(delta.get("content"))
                if content:
                    yield TextDelta(content)
                for fragment in objs(delta.get("tool_calls")):
                    index = fragment.get("index")
                    entry = calls.setdefault(index if isinstance(index, int) else 0, ["", ""])
                    if text(fragment.get("id")):
                        entry[0] = fragment["id"]
                    function = obj(fragment.get("function"))
                    if text(function.get("name")) and not entry[1]:
                        entry[1] = function["name"]
                    if text(function.get("arguments")):
                        entry.append(function["arguments"])
                finish = text(choice.get("finish_reason")) or finish
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
    _cache_key_field = False


async def _chunks(response: Any) -> AsyncIterator[Any]:
    """The JSON of each chunk of the streamed response, as the SDK would give it:
    up to `[DONE]` (the rest of the body read, so the connection is reused), an error
    chunk raised as the SDK's APIError."""
    body = response.aiter_bytes()
    events = sse_events(body)
    try:
        async for _, data in events:
            if data.startswith(b"[DONE]"):
                await drain(body)
                return
            chunk = loads(data)
            if is_json_object(chunk) and chunk.get("error"):
                raise _stream_error(chunk["error"], response)
            yield chunk
    finally:
        await events.aclose()
        await body.aclose()


def _stream_error(error: object, response: Any) -> Exception:
    """The SDK's error for an error chunk inside a 200 stream."""
    import openai

    message = error.get("message") if is_json_object(error) else None
    if not isinstance(message, str) or not message:
        message = "An error occurred during streaming"
    return openai.APIError(message=message, request=response.request, body=error)


def _set_usage(usage: Usage, reported: dict[str, Any]) -> None:
    """OpenAI counts cached prompt tokens inside prompt_tokens; we report them apart."""
    cached = count(obj(reported.get("prompt_tokens_details")).get("cached_tokens"))
    usage.input_tokens = max(0, count(reported.get("prompt_tokens")) - cached)
    usage.output_tokens = count(reported.get("completion_tokens"))
    usage.cache_read_tokens = cached or None
