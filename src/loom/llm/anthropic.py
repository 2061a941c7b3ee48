"""Anthropic Messages API adapter over the official `anthropic` SDK (imported lazily)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from functools import partial
from typing import Any

from loom.core.messages import (
    AssistantMessage,
    Message,
    ReasoningPart,
    SystemMessage,
    ToolCall,
    ToolMessage,
    Usage,
)
from loom.llm._convert import normalize_stop_reason, system_text
from loom.llm._direct import DirectPost
from loom.llm._errors import sdk_stream, unreadable
from loom.llm._events import count, obj, text
from loom.llm._images import anthropic_block, images_of
from loom.llm._sse import loads, sse_events
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
from loom.llm.clients import client_key, shared_client
from loom.llm.effort import anthropic_thinking
from loom.llm.guard import guarded_async_client

INTERLEAVED_BETA = "interleaved-thinking-2025-05-14"  # thinking between tool calls
_THINKING_KINDS = ("thinking", "redacted_thinking")


def anthropic_units(message: Message, model: str = "") -> list[Unit]:
    """One message as Messages API content blocks; a tool result is a block of the next
    user turn (encoded once: `loom.llm._wire`). An answer's thinking blocks `model` wrote
    come first, unchanged (with their signatures), as the API asks; another model's are
    left out (it could not check their signatures)."""
    images = images_of(message)
    if isinstance(message, ToolMessage):
        content: Any = message.content or "(empty)"
        if images:  # an image file the agent read: shown to the model as an image
            content = [{"type": "text", "text": content}, *map(anthropic_block, images)]
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": message.tool_call_id,
            "content": content,
        }
        if message.is_error:
            block["is_error"] = True
        return [("user", dumps(block))]
    if isinstance(message, AssistantMessage):
        # thinking alone (an answer cut short) is not sent: it must precede what it led to
        thinking = _own_thinking(message, model) if message.content or message.tool_calls else []
        units: list[Unit] = [
            ("assistant", _thinking_block(p)) for p in thinking if not p.after_calls
        ]
        if message.content:
            units.append(("assistant", dumps({"type": "text", "text": message.content})))
        for number, call in enumerate(message.tool_calls):
            if number:  # interleaved thinking between calls, where it came
                units += [
                    ("assistant", _thinking_block(p)) for p in thinking if p.after_calls == number
                ]
            block = {
                "type": "tool_use",
                "id": call.id,
                "name": call.tool_name,
                "input": call.arguments_json,
            }
            units.append(("assistant", dumps(block)))
        return units
    units = [("user", dumps(anthropic_block(ref))) for ref in images]
    if message.content:
        units.append(("user", dumps({"type": "text", "text": message.content})))
    return units


# Prompt caching (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching): a
# breakpoint at the end of the stable prefix (tools, then system) and one on the last
# block of each of the newest two groups of the conversation, moving with it: the newest
# is where the next call reads from; the one before is where the previous call wrote,
# read back even when more blocks than the API's look-back (20) came since. The call's
# context block, when it has one, carries the 4th: the block stays in the history where
# it was sent (loom.session.runtime.context_blocks), so the next call reads it back.
MOVING_BREAKPOINTS = 2


def cache_control(ttl: str) -> bytes:
    """The `cache_control` value for a breakpoint kept `ttl` ("5m" is the default)."""
    if ttl == "1h":
        return b'{"type":"ephemeral","ttl":"1h"}'
    return b'{"type":"ephemeral"}'


def _marked(control: bytes) -> Callable[[bytes], bytes]:
    """A breakpoint on a content block (a thinking block may not carry one: left as is)."""

    def mark(block: bytes) -> bytes:
        if block.startswith((b'{"type":"thinking"', b'{"type":"redacted_thinking"')):
            return block
        return block[:-1] + b',"cache_control":' + control + b"}"

    return mark


def _own_thinking(message: AssistantMessage, model: str) -> list[ReasoningPart]:
    return [
        part
        for part in message.reasoning or ()
        if part.kind in _THINKING_KINDS and part.readable_by("anthropic", model)
    ]


def _thinking_block(part: ReasoningPart) -> bytes:
    if part.kind == "redacted_thinking":
        return dumps({"type": "redacted_thinking", "data": part.data or ""})
    return dumps({"type": "thinking", "thinking": part.text, "signature": part.signature or ""})


def thinking_fits(messages: Sequence[Message], model: str) -> bool:
    """Whether thinking may be on for this call: when tool results close the conversation,
    the answer that asked for them must have its own thinking to send back (the API
    refuses it otherwise; a turn that started with thinking off, or with another model,
    finishes its tool round without)."""
    for message in reversed(messages):
        if isinstance(message, ToolMessage | SystemMessage):
            continue
        if isinstance(message, AssistantMessage) and message.tool_calls:
            return bool(_own_thinking(message, model))
        return True
    return True


def _turn(role: str, blocks: list[bytes]) -> bytes:
    """One Messages API message from its blocks (the API wants roles to alternate)."""
    return b'{"role":"%s","content":[%s]}' % (role.encode(), b",".join(blocks))


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
        def build() -> Any:
            import anthropic

            return anthropic.AsyncAnthropic(
                api_key=None if bearer else api_key,
                auth_token=api_key if bearer else None,
                base_url=base_url,
                max_retries=0,
                timeout=timeout,
                http_client=guarded_async_client(timeout),
            )

        key = client_key(self.name, base_url, api_key, timeout, bearer)
        self._client = shared_client(key, build)
        self.endpoint = str(self._client.base_url)
        self.history = self._history_for("")
        self._post = DirectPost(self._client, "anthropic", "/v1/messages")
        beta = {"headers": {"anthropic-beta": INTERLEAVED_BETA}}
        self._interleaved_post = DirectPost(self._client, "anthropic", "/v1/messages", beta)

    def _history_for(self, model: str) -> WireHistory:
        """The encoded history for `model` (its thinking blocks readable only by it)."""
        history = getattr(self, "history", None)
        fmt = f"{self.name}:{model}" if model else self.name
        if history is None or history.fmt != fmt:
            units = partial(anthropic_units, model=model)
            history = self.history = WireHistory(fmt, units, _turn, MOVING_BREAKPOINTS)
        return history

    def _thinking(self, request: LlmRequest) -> Any:
        """Claude's thinking fields for this call (loom.llm.effort), or None."""
        info = model_info(self.name, request.model)
        thinking = anthropic_thinking(info, request.effort, request.max_tokens)
        if thinking is None or not thinking_fits(request.messages, request.model):
            return None
        return thinking

    def request_body(self, request: LlmRequest) -> bytes:
        """The JSON body of a streamed Messages API request, with prompt-cache
        breakpoints (MOVING_BREAKPOINTS) and the call's context block last."""
        control = cache_control(request.cache_ttl)
        mark = _marked(control)
        after = [("user", mark(dumps({"type": "text", "text": request.context})))]
        wire, system_texts = self._history_for(request.model).encode(
            request.messages, after=after if request.context else (), mark=mark
        )
        thinking = self._thinking(request)
        head: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens if thinking is None else thinking.max_tokens,
            "stream": True,
        }
        if thinking is not None:  # no temperature with thinking: the API refuses it
            head["thinking"] = thinking.thinking
            if thinking.output_config is not None:
                head["output_config"] = thinking.output_config
        marker = loads(control)
        system = system_text(request.system, system_texts)
        tools = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in request.tools
        ]
        if system:
            head["system"] = [{"type": "text", "text": system, "cache_control": marker}]
        elif tools:
            tools[-1]["cache_control"] = marker
        if tools:
            head["tools"] = tools
        if request.temperature is not None and thinking is None:
            head["temperature"] = request.temperature
        return body(head, "messages", wire)

    def stream(self, request: LlmRequest) -> AsyncIterator[StreamEvent]:
        async def open_stream() -> Any:
            # The bytes are sent as they are, with the request the SDK built once
            # (`loom.llm._direct`); the response's events are read by `loom.llm._sse`
            # (the SDK's decoder cost several times a plain read per event).
            thinking = self._thinking(request)
            post = self._interleaved_post if thinking and thinking.interleaved else self._post
            return await post.response(self.request_body(request))

        return sdk_stream(
            open_stream,
            partial(self._consume, model=request.model),
            provider=self.name,
            endpoint=self.endpoint,
            key_hint="ANTHROPIC_API_KEY",
        )

    async def _consume(self, response: Any, *, model: str = "") -> AsyncIterator[StreamEvent]:
        usage = Usage()
        tool_blocks: dict[int, tuple[str, str, list[str]]] = {}  # index -> id, name, json parts
        thinking: dict[int, dict[str, Any]] = {}  # index -> the thinking block so far
        calls = 0
        stop_reason: str | None = None
        started = finished = False
        async for event in _events(response, self._client):
            event = obj(event)
            kind = event.get("type")
            index = event.get("index")
            if kind == "message_start":
                started = True
                _update_usage(usage, obj(obj(event.get("message")).get("usage")))
            elif kind == "content_block_start":
                block = obj(event.get("content_block"))
                if block.get("type") == "tool_use" and isinstance(index, int):
                    tool_blocks[index] = (text(block.get("id")), text(block.get("name")), [])
                elif block.get("type") in _THINKING_KINDS and isinstance(index, int):
                    thinking[index] = {**block, "parts": [text(block.get("thinking"))]}
            elif kind == "content_block_delta":
                delta = obj(event.get("delta"))
                if delta.get("type") == "text_delta" and text(delta.get("text")):
                    yield TextDelta(delta["text"])
                elif delta.get("type") == "input_json_delta" and index in tool_blocks:
                    tool_blocks[index][2].append(text(delta.get("partial_json")))
                elif delta.get("type") == "thinking_delta" and index in thinking:
                    thinking[index]["parts"].append(text(delta.get("thinking")))
                    if text(delta.get("thinking")):
                        yield ThinkingDelta(delta["thinking"])
                elif delta.get("type") == "signature_delta" and index in thinking:
                    thinking[index]["signature"] = text(delta.get("signature"))
            elif kind == "content_block_stop" and index in thinking:
                yield ReasoningReady(_thinking_part(thinking.pop(index), model, calls))
            elif kind == "content_block_stop" and index in tool_blocks:
                call_id, name, parts = tool_blocks.pop(index)
                calls += 1
                yield ToolCallReady(
                    ToolCall(
                        id=call_id,
                        tool_name=name,
                        arguments_json=parse_tool_arguments("".join(parts)),
                    )
                )
            elif kind == "message_delta":
                stop_reason = text(obj(event.get("delta")).get("stop_reason")) or stop_reason
                _update_usage(usage, obj(event.get("usage")))
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


def _thinking_part(block: dict[str, Any], model: str, calls_before: int) -> ReasoningPart:
    """A finished thinking (or redacted thinking) block, kept exactly as it came."""
    if block.get("type") == "redacted_thinking":
        return ReasoningPart(
            kind="redacted_thinking",
            provider="anthropic",
            model=model,
            data=text(block.get("data")),
            after_calls=calls_before or None,
        )
    return ReasoningPart(
        kind="thinking",
        provider="anthropic",
        model=model,
        text="".join(block["parts"]),
        signature=text(block.get("signature")),
        after_calls=calls_before or None,
    )


def _update_usage(usage: Usage, reported: dict[str, Any]) -> None:
    """message_start carries input counts; message_delta carries cumulative output."""
    if count(reported.get("input_tokens")):
        usage.input_tokens = reported["input_tokens"]
    if count(reported.get("output_tokens")):
        usage.output_tokens = reported["output_tokens"]
    if count(reported.get("cache_read_input_tokens")):
        usage.cache_read_tokens = reported["cache_read_input_tokens"]
    if count(reported.get("cache_creation_input_tokens")):
        usage.cache_write_tokens = reported["cache_creation_input_tokens"]


async def _events(response: Any, client: Any) -> AsyncIterator[Any]:
    """The JSON of each event of the streamed response, as the SDK's stream gives it:
    `ping` and unnamed events skipped, an `error` event raised as the SDK's own
    status error (`client._make_status_error`), read to the end of the body."""
    body = response.aiter_bytes()
    events = sse_events(body)
    try:
        async for name, data in events:
            if not name or name == b"ping":
                continue
            if name == b"error":
                raise _stream_error(data, response, client)
            if data:
                yield loads(data)
    finally:
        await events.aclose()
        await body.aclose()


def _stream_error(data: bytes, response: Any, client: Any) -> Exception:
    error: Any
    try:
        error = loads(data)
        message = f"{error}"
    except ValueError:
        error = data.decode(errors="replace")
        message = error or f"Error code: {response.status_code}"
    return client._make_status_error(message, body=error, response=response)
