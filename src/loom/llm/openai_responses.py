"""OpenAI Responses API adapter (`POST /v1/responses`) over the official `openai` SDK.

The default for `openai` (`[providers.openai] api = "responses"`); Chat Completions
(`loom.llm.openai`) stays for `api = "chat"` and for `openai-compatible` servers. Codex
and pro models are served only here.

Nothing is stored at OpenAI (`store: false`): a reasoning model's reasoning comes back
encrypted (`include: ["reasoning.encrypted_content"]`), is kept on the answer as opaque
`ReasoningPart`s, and is sent back in order before the answer's text and calls on every
following call, as the API asks. Readable reasoning summaries (`summary: "auto"`) stream
as `ThinkingDelta`s. Bodies are built from messages encoded once (`loom.llm._wire`), one
history per model: a part written by another model is left out (it cannot read it).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

from loom.core.messages import (
    AssistantMessage,
    Message,
    ReasoningPart,
    ToolCall,
    ToolMessage,
    Usage,
)
from loom.llm._convert import system_text
from loom.llm._direct import DirectPost
from loom.llm._errors import sdk_stream, unreadable
from loom.llm._events import count, obj, objs, text
from loom.llm._images import b64, images_of, missing_note
from loom.llm._sse import drain, loads, sse_events
from loom.llm._wire import Unit, WireHistory, body, dumps
from loom.llm.base import (
    LlmRequest,
    ReasoningReady,
    StreamEnd,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallReady,
    UsageReport,
    parse_tool_arguments,
)
from loom.llm.catalog import model_info
from loom.llm.effort import openai_reasoning
from loom.llm.openai import context_after, openai_client

_POST_OPTIONS: dict[str, Any] = {"security": {"bearer_auth": True}}


def responses_units(message: Message, *, provider: str, model: str) -> list[Unit]:
    """One message as Responses API input items, each a whole item."""
    if isinstance(message, ToolMessage):
        return [(None, dumps(_call_output(message)))]
    if isinstance(message, AssistantMessage):
        items: list[dict[str, Any]] = [
            _reasoning_item(part)
            for part in message.reasoning or ()
            if part.kind == "reasoning" and part.readable_by(provider, model)
        ]
        if message.content:
            items.append(
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": message.content}],
                }
            )
        items += [
            {
                "type": "function_call",
                "call_id": call.id,
                "name": call.tool_name,
                "arguments": dumps(call.arguments_json).decode(),
            }
            for call in message.tool_calls
        ]
        if items and items[-1]["type"] == "reasoning":
            return []  # reasoning must be followed by what it led to: an answer cut short
        return [(None, dumps(item)) for item in items]
    parts = [_image(ref) for ref in images_of(message)]
    if not parts:
        return [(None, dumps({"role": "user", "content": message.content}))]
    if message.content:
        parts.insert(0, {"type": "input_text", "text": message.content})
    return [(None, dumps({"role": "user", "content": parts}))]


def _reasoning_item(part: ReasoningPart) -> dict[str, Any]:
    summary = [{"type": "summary_text", "text": part.text}] if part.text else []
    item: dict[str, Any] = {"type": "reasoning", "id": part.id, "summary": summary}
    if part.data is not None:
        item["encrypted_content"] = part.data
    return item


def _call_output(message: ToolMessage) -> dict[str, Any]:
    output: Any = message.content or "(empty)"
    images = images_of(message)
    if images:  # an image file the agent read: shown to the model as an image
        output = [{"type": "input_text", "text": output}, *map(_image, images)]
    return {"type": "function_call_output", "call_id": message.tool_call_id, "output": output}


def _image(ref: Any) -> dict[str, Any]:
    data = b64(ref)
    if data is None:
        return {"type": "input_text", "text": missing_note(ref)}
    url = f"data:{ref.media_type};base64,{data}"
    return {"type": "input_image", "image_url": url, "detail": "auto"}


def _no_merge(role: str, pieces: list[bytes]) -> bytes:
    raise AssertionError(f"Responses API items are never merged ({role!r})")


class OpenAIResponsesProvider:
    name = "openai"
    _key_hint = "OPENAI_API_KEY"

    def __init__(
        self,
        *,
        api_key: str | None,
        base_url: str | None = None,
        timeout: float = 600.0,
        name: str = "openai",
    ) -> None:
        self.name = name
        if name != "openai":
            self._key_hint = "OPENAI_COMPATIBLE_API_KEY"
        self._client = openai_client(api_key, base_url, timeout)
        self.endpoint = str(self._client.base_url)
        self.history = self._history_for("")
        self._post = DirectPost(self._client, "openai", "/responses", _POST_OPTIONS)

    def _history_for(self, model: str) -> WireHistory:
        """The encoded history for `model`: its reasoning parts are readable only by it,
        so another model starts a history of its own (a switch is rare)."""
        history = getattr(self, "history", None)
        if history is None or history.fmt != f"responses:{model}":
            encode = partial(responses_units, provider=self.name, model=model)
            history = self.history = WireHistory(f"responses:{model}", encode, _no_merge)
        return history

    def request_body(self, request: LlmRequest) -> bytes:
        """The JSON body of a streamed Responses API request."""
        history = self._history_for(request.model)
        wire, system_texts = history.encode(request.messages, after=context_after(request))
        info = model_info(self.name, request.model)
        head: dict[str, Any] = {
            "model": request.model,
            "stream": True,
            "store": False,
            "max_output_tokens": request.max_tokens,
        }
        system = system_text(request.system, system_texts)
        if system:
            head["instructions"] = system
        if request.tools:
            head["tools"] = [
                {
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                    "strict": False,
                }
                for t in request.tools
            ]
        reasoning = openai_reasoning(info, request.effort)
        if reasoning is not None:
            head["reasoning"] = reasoning
            head["include"] = ["reasoning.encrypted_content"]
        elif request.temperature is not None:  # reasoning models refuse a temperature
            head["temperature"] = request.temperature
        if request.cache_key:
            head["prompt_cache_key"] = request.cache_key
        return body(head, "input", wire)

    def stream(self, request: LlmRequest) -> AsyncIterator[StreamEvent]:
        async def open_stream() -> Any:
            return await self._post.response(self.request_body(request))

        return sdk_stream(
            open_stream,
            partial(self._consume, model=request.model),
            provider=self.name,
            endpoint=self.endpoint,
            key_hint=self._key_hint,
        )

    async def _consume(self, response: Any, *, model: str) -> AsyncIterator[StreamEvent]:
        usage = Usage()
        arguments: dict[str, list[str]] = {}  # item id -> argument fragments
        calls = 0
        summaries = 0  # summary parts streamed so far (a blank line between two)
        stop: str | None = None
        started = False
        async for event in _events(response):
            kind = event.get("type")
            if kind == "response.created":
                started = True
            elif kind == "response.output_text.delta":
                if text(event.get("delta")):
                    yield TextDelta(event["delta"])
            elif kind == "response.reasoning_summary_text.delta":
                if text(event.get("delta")):
                    yield ThinkingDelta(event["delta"])
            elif kind == "response.reasoning_summary_part.added":
                if summaries:
                    yield ThinkingDelta("\n\n")
                summaries += 1
            elif kind == "response.function_call_arguments.delta":
                arguments.setdefault(text(event.get("item_id")), []).append(
                    text(event.get("delta"))
                )
            elif kind == "response.output_item.done":
                item = obj(event.get("item"))
                if item.get("type") == "reasoning":
                    yield ReasoningReady(_reasoning_part(item, self.name, model))
                elif item.get("type") == "function_call":
                    calls += 1
                    streamed = "".join(arguments.pop(text(item.get("id")), []))
                    yield ToolCallReady(_tool_call(item, streamed))
            elif kind in ("response.completed", "response.incomplete"):
                done = obj(event.get("response"))
                _set_usage(usage, obj(done.get("usage")))
                reason = text(obj(done.get("incomplete_details")).get("reason"))
                stop = (
                    _STOP.get(reason, "end_turn") if kind == "response.incomplete" else "end_turn"
                )
                break
            elif kind == "response.failed":
                raise _failed(obj(obj(event.get("response")).get("error")), response)
        if not started:
            raise unreadable(
                self.name,
                "no Responses API events in the response",
                self.endpoint,
                transient=False,
            )
        if stop is None:
            raise unreadable(self.name, "the stream ended before response.completed", self.endpoint)
        yield UsageReport(usage)
        yield StreamEnd("tool_use" if calls and stop == "end_turn" else stop)


_STOP = {"max_output_tokens": "max_tokens", "content_filter": "refusal"}


def _reasoning_part(item: dict[str, Any], provider: str, model: str) -> ReasoningPart:
    summary = "\n\n".join(text(s.get("text")) for s in objs(item.get("summary")) if s.get("text"))
    encrypted = item.get("encrypted_content")
    return ReasoningPart(
        kind="reasoning",
        provider=provider,
        model=model,
        text=summary,
        data=encrypted if isinstance(encrypted, str) else None,
        id=text(item.get("id")) or None,
    )


def _tool_call(item: dict[str, Any], streamed: str) -> ToolCall:
    given = item.get("arguments")
    return ToolCall(
        id=text(item.get("call_id")) or f"call_{uuid.uuid4().hex[:24]}",
        tool_name=text(item.get("name")),
        arguments_json=parse_tool_arguments(given if isinstance(given, str) else streamed),
    )


async def _events(response: Any) -> AsyncIterator[dict[str, Any]]:
    """The JSON of each streamed event; an `error` event raised as the SDK's APIError,
    the rest of the body read after the last event (the connection is reused)."""
    chunks = response.aiter_bytes()
    events = sse_events(chunks)
    try:
        async for _name, data in events:
            if not data or data.startswith(b"[DONE]"):
                continue
            event = obj(loads(data))
            if event.get("type") == "error":
                raise _failed(event, response)
            if isinstance(event.get("error"), dict):  # a proxy's Chat Completions-style error
                raise _failed(event["error"], response)
            yield event
            if event.get("type") in ("response.completed", "response.incomplete"):
                await drain(chunks)
                return
    finally:
        await events.aclose()
        await chunks.aclose()


def _failed(error: dict[str, Any], response: Any) -> Exception:
    """The SDK's error for an error event (or a failed response) inside a 200 stream."""
    import openai

    message = text(error.get("message")) or "An error occurred during streaming"
    kind = text(error.get("type")) or text(error.get("code")) or "server_error"
    body_: dict[str, Any] = {"message": message, "type": kind}
    return openai.APIError(message=message, request=response.request, body=body_)


def _set_usage(usage: Usage, reported: dict[str, Any]) -> None:
    """The Responses API counts cached tokens inside input_tokens and reasoning inside
    output_tokens; we report cached apart (the catalog's convention) and reasoning as
    the part of output it is."""
    cached = count(obj(reported.get("input_tokens_details")).get("cached_tokens"))
    usage.input_tokens = max(0, count(reported.get("input_tokens")) - cached)
    usage.output_tokens = count(reported.get("output_tokens"))
    usage.cache_read_tokens = cached or None
    reasoning = count(obj(reported.get("output_tokens_details")).get("reasoning_tokens"))
    usage.reasoning_tokens = reasoning or None
