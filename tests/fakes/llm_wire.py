"""Scripted turns and how the fake LLM server renders them in each provider's wire format.

See `tests.fakes.llm_server` for the server and the script format. This module is pure:
a `Turn` plus the request's format and streaming flag -> status, headers, body chunks.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.prompt_cache import PromptUsage


@dataclass
class FakeToolCall:
    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)  # str: sent verbatim
    id: str | None = None  # None: a fresh id; "" is sent empty (some local servers do)
    thought_signature: str | None = None  # Gemini only: base64, sent on the part

    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)


@dataclass
class Turn:
    """One scripted response. Exactly one of: a reply (text and/or tool calls), an HTTP
    error (`status` >= 400), or a `garbage` body (sent with status 200)."""

    text: str | list[str] = ""  # a list gives the exact stream chunks
    tool_calls: list[FakeToolCall] = field(default_factory=list)
    status: int = 200
    error_message: str = ""
    retry_after: float | None = None
    garbage: str | None = None
    content_type: str | None = None  # with garbage: sent verbatim with this content type
    delay: float = 0.0  # seconds before the response starts
    chunk_delay: float = 0.0  # seconds between streamed chunks (a slow model, mid-stream tests)
    stall: float = 0.0  # seconds of silence after the first streamed chunk (a stalled stream)
    stop_reason: str | None = None  # default: tool use if tool calls, else end of turn
    input_tokens: int | None = None  # default: the prompt's size / 4 (see prompt_cache)
    output_tokens: int | None = None  # default: from the reply's size
    # reasoning, streamed when the request turns it on (tests.fakes.llm_reasoning): Claude's
    # thinking, an OpenAI reasoning summary, Gemini's thoughts; a default text if empty
    thinking: str | list[str] = ""
    redacted_thinking: bool = False  # Claude: a redacted_thinking block after the thinking
    # Claude: a thinking block between two tool calls (interleaved thinking: only with the
    # beta header, or in adaptive mode)
    interleaved: str = ""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Turn:
        data = dict(data)
        calls = [FakeToolCall(**call) for call in data.pop("tool_calls", [])]
        error = data.pop("error", None)
        if error is not None:  # {"error": {"status": 429, "message": "...", "retry_after": 1}}
            data["status"] = error["status"]
            data["error_message"] = error.get("message", "")
            data["retry_after"] = error.get("retry_after")
        return cls(tool_calls=calls, **data)

    def text_chunks(self) -> list[str]:
        if isinstance(self.text, list):
            return list(self.text)
        if not self.text:
            return []
        words = self.text.split(" ")
        size = max(1, len(words) // 3)
        pieces = [" ".join(words[i : i + size]) for i in range(0, len(words), size)]
        return [piece + (" " if i < len(pieces) - 1 else "") for i, piece in enumerate(pieces)]

    def full_text(self) -> str:
        return "".join(self.text_chunks())

    def usage(self, cache: PromptUsage) -> tuple[PromptUsage, int]:
        """(the prompt's tokens, cached ones among them; output tokens). A scripted
        `input_tokens` stands for the whole prompt, none of it cached."""
        prompt = cache if self.input_tokens is None else PromptUsage(self.input_tokens)
        if prompt.total < 1:
            prompt = PromptUsage(1)
        reply = sum(len(c.arguments_text()) for c in self.tool_calls) + len(self.full_text())
        out = self.output_tokens if self.output_tokens is not None else max(1, reply // 4)
        return prompt, out


@dataclass
class Rendered:
    status: int
    headers: dict[str, str]
    chunks: list[bytes]


def _arguments_object(call: FakeToolCall) -> Any:
    """Formats that carry arguments as objects cannot carry broken JSON: wrap it."""
    try:
        return json.loads(call.arguments_text())
    except ValueError:
        return {"raw": call.arguments_text()}


def split_in_three(text: str) -> list[str]:
    if len(text) < 3:
        return [text]
    third = len(text) // 3
    return [text[:third], text[third : 2 * third], text[2 * third :]]


def _sse(data: Any, event: str | None = None) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data)
    prefix = f"event: {event}\n" if event else ""
    return f"{prefix}data: {payload}\n\n".encode()


def _json(status: int, body: Any, extra: dict[str, str] | None = None) -> Rendered:
    headers = {"content-type": "application/json", **(extra or {})}
    return Rendered(status, headers, [json.dumps(body).encode()])


_SSE_HEADERS = {"content-type": "text/event-stream", "cache-control": "no-cache"}

# -- errors ------------------------------------------------------------------------------

_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    529: "overloaded_error",
}
_GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    503: "UNAVAILABLE",
}


def render_error(fmt: str, turn: Turn) -> Rendered:
    status = turn.status
    message = turn.error_message or f"fake llm server: scripted error {status}"
    headers = {}
    if turn.retry_after is not None:
        headers["retry-after"] = f"{turn.retry_after:g}"
    if fmt == "anthropic":
        kind = _ANTHROPIC_ERROR_TYPES.get(status, "api_error")
        body: Any = {"type": "error", "error": {"type": kind, "message": message}}
    elif fmt in ("openai", "responses"):
        body = {"error": {"message": message, "type": "fake_error", "code": str(status)}}
    else:
        body = {
            "error": {
                "code": status,
                "message": message,
                "status": _GOOGLE_STATUS.get(status, "INTERNAL"),
            }
        }
    return _json(status, body, headers)


def render_garbage(turn: Turn, stream: bool) -> Rendered:
    """Status 200 and a body no SDK can use: as an SSE `data:` line for stream requests
    (unless it already is SSE), or verbatim when the turn names a content type."""
    body = turn.garbage or ""
    if turn.content_type:
        return Rendered(200, {"content-type": turn.content_type}, [body.encode()])
    headers = _SSE_HEADERS if stream else {"content-type": "application/json"}
    if stream and not body.startswith(("data:", "event:")):
        body = f"data: {body}\n\n"
    return Rendered(200, dict(headers), [body.encode()])


# -- Anthropic Messages ------------------------------------------------------------------


def _anthropic_stop(turn: Turn) -> str:
    return turn.stop_reason or ("tool_use" if turn.tool_calls else "end_turn")


def _anthropic_usage(prompt: PromptUsage, out: int) -> dict[str, Any]:
    return {
        "input_tokens": prompt.uncached,
        "cache_creation_input_tokens": prompt.write,
        "cache_read_input_tokens": prompt.read,
        "cache_creation": {
            "ephemeral_5m_input_tokens": prompt.write - prompt.write_1h,
            "ephemeral_1h_input_tokens": prompt.write_1h,
        },
        "output_tokens": out,
    }


def render_anthropic(
    turn: Turn,
    model: str,
    stream: bool,
    cache: PromptUsage,
    lead: tuple[list[bytes], int, int] = ([], 0, 0),
    between: Callable[[int], list[bytes]] | None = None,
) -> Rendered:
    """`lead`: events of blocks streamed first (thinking), how many blocks, their tokens;
    `between(index)`: a block streamed at `index` between two tool calls (interleaved
    thinking)."""
    prompt, out = turn.usage(cache)
    lead_events, lead_blocks, lead_tokens = lead
    out += lead_tokens
    message_id = f"msg_{uuid.uuid4().hex[:20]}"
    calls = [
        (call.id if call.id is not None else f"toolu_{uuid.uuid4().hex[:20]}", call)
        for call in turn.tool_calls
    ]  # an id of "" is sent as it is (a quirk to test)
    if not stream:
        content: list[dict[str, Any]] = []
        if turn.full_text():
            content.append({"type": "text", "text": turn.full_text()})
        for call_id, call in calls:
            content.append(
                {
                    "type": "tool_use",
                    "id": call_id,
                    "name": call.name,
                    "input": _arguments_object(call),
                }
            )
        return _json(
            200,
            {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": content,
                "stop_reason": _anthropic_stop(turn),
                "stop_sequence": None,
                "usage": _anthropic_usage(prompt, out),
            },
        )
    events = [
        _sse(
            {
                "type": "message_start",
                "message": {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": _anthropic_usage(prompt, 1),
                },
            },
            "message_start",
        ),
        _sse({"type": "ping"}, "ping"),
        *lead_events,
    ]
    index = lead_blocks
    if turn.text_chunks():
        events.append(
            _sse(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
                "content_block_start",
            )
        )
        for chunk in turn.text_chunks():
            events.append(
                _sse(
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": chunk},
                    },
                    "content_block_delta",
                )
            )
        events.append(_sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
        index += 1
    for number, (call_id, call) in enumerate(calls):
        if number and between is not None:
            events += between(index)
            index += 1
        events.append(
            _sse(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {
                        "type": "tool_use",
                        "id": call_id,
                        "name": call.name,
                        "input": {},
                    },
                },
                "content_block_start",
            )
        )
        for piece in split_in_three(call.arguments_text()):
            events.append(
                _sse(
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": piece},
                    },
                    "content_block_delta",
                )
            )
        events.append(_sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
        index += 1
    events.append(
        _sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": _anthropic_stop(turn), "stop_sequence": None},
                "usage": {"output_tokens": out},
            },
            "message_delta",
        )
    )
    events.append(_sse({"type": "message_stop"}, "message_stop"))
    return Rendered(200, dict(_SSE_HEADERS), events)


# -- OpenAI Chat Completions -------------------------------------------------------------


def _openai_finish(turn: Turn) -> str:
    return turn.stop_reason or ("tool_calls" if turn.tool_calls else "stop")


def render_openai(
    turn: Turn, model: str, stream: bool, cache: PromptUsage, include_usage: bool
) -> Rendered:
    prompt, out = turn.usage(cache)
    usage = {
        "prompt_tokens": prompt.total,
        "completion_tokens": out,
        "total_tokens": prompt.total + out,
        "prompt_tokens_details": {"cached_tokens": prompt.read, "audio_tokens": 0},
    }
    completion_id = f"chatcmpl-{uuid.uuid4().hex[:20]}"
    calls = [
        (call.id if call.id is not None else f"call_{uuid.uuid4().hex[:20]}", call)
        for call in turn.tool_calls
    ]  # an id of "" is sent as it is (a quirk to test)
    base = {"id": completion_id, "created": 1_700_000_000, "model": model}
    if not stream:
        message: dict[str, Any] = {"role": "assistant", "content": turn.full_text() or None}
        if calls:
            message["tool_calls"] = [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_text()},
                }
                for call_id, call in calls
            ]
        return _json(
            200,
            {
                **base,
                "object": "chat.completion",
                "choices": [
                    {"index": 0, "message": message, "finish_reason": _openai_finish(turn)}
                ],
                "usage": usage,
            },
        )

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse(
            {
                **base,
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
        )

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": text}) for text in turn.text_chunks()]
    for index, (call_id, call) in enumerate(calls):
        events.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call_id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": ""},
                        }
                    ]
                }
            )
        )
        for piece in split_in_three(call.arguments_text()):
            events.append(
                chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            )
    events.append(chunk({}, _openai_finish(turn)))
    if include_usage:
        events.append(
            _sse({**base, "object": "chat.completion.chunk", "choices": [], "usage": usage})
        )
    events.append(b"data: [DONE]\n\n")
    return Rendered(200, dict(_SSE_HEADERS), events)


# -- Gemini generateContent --------------------------------------------------------------


def render_google(
    turn: Turn,
    model: str,
    stream: bool,
    cache: PromptUsage,
    thoughts: list[dict[str, Any]] | None = None,
) -> Rendered:
    """`thoughts`: thought-summary parts streamed first (tests.fakes.llm_reasoning)."""
    prompt, out = turn.usage(cache)
    thoughts = thoughts or []
    thought_tokens = sum(len(part["text"]) for part in thoughts) // 4
    usage = {
        "promptTokenCount": prompt.total,
        "candidatesTokenCount": out,
        "totalTokenCount": prompt.total + out + thought_tokens,
    }
    if prompt.read:
        usage["cachedContentTokenCount"] = prompt.read
    if thoughts:
        usage["thoughtsTokenCount"] = thought_tokens
    finish = turn.stop_reason or "STOP"

    def response(parts: list[dict[str, Any]], last: bool) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
        if last:
            candidate["finishReason"] = finish
        body: dict[str, Any] = {"candidates": [candidate], "modelVersion": model}
        if last:
            body["usageMetadata"] = usage
        return body

    call_parts = [
        {
            "functionCall": {
                "name": call.name,
                "args": _arguments_object(call),
                **({"id": call.id} if call.id else {}),
            },
            **({"thoughtSignature": call.thought_signature} if call.thought_signature else {}),
        }
        for call in turn.tool_calls
    ]
    if not stream:
        parts = ([{"text": turn.full_text()}] if turn.full_text() else []) + call_parts
        return _json(200, response(parts, last=True))
    texts = turn.text_chunks()
    events = [_sse(response([part], last=False)) for part in thoughts]
    events += [_sse(response([{"text": text}], last=False)) for text in texts]
    if call_parts or not texts:
        events.append(_sse(response(call_parts, last=True)))
    else:  # the last text chunk carries finishReason and usage, as the real API does
        events[-1] = _sse(response([{"text": texts[-1]}], last=True))
    return Rendered(200, dict(_SSE_HEADERS), events)
