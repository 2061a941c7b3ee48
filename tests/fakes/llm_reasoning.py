"""The fake LLM server's reasoning: the OpenAI Responses API, Claude's thinking blocks,
Gemini's thoughts, and the rules the real APIs enforce about sending reasoning back.

Pure, as `tests.fakes.llm_wire`: a request body and a `Turn` in, a `Rendered` out.

Rules enforced (each answered in the provider's own error shape, with its own words):

- Responses API: a reasoning item sent with `store: false` must carry the
  `encrypted_content` this server issued (404 otherwise, as the API has nothing stored),
  unchanged (400); a reasoning item must be followed by the item it led to, a function
  call or an assistant message (400); a function_call_output must answer a function
  call earlier in the input (400).
- Chat Completions refuses codex models with the API's 404.
- Claude with thinking on: no temperature but 1, `max_tokens` above `budget_tokens`,
  every thinking block's signature (and redacted block's data) as issued, and the last
  assistant turn, when its tool results close the conversation, must start with its
  own thinking block (400 with the API's message).
- Gemini: thinkingBudget and thinkingLevel are not both set.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from typing import Any

from tests.fakes.llm_wire import _SSE_HEADERS, Rendered, Turn, _json, _sse, split_in_three
from tests.fakes.prompt_cache import PromptUsage

_SECRET = "fake-llm-server-reasoning"
DEFAULT_THINKING = "Let me think about what is asked."
CODEX_404 = "This model is only supported in v1/responses and not in v1/chat/completions."


def seal(text: str) -> str:
    """A signature (or encrypted content) only this server issues for `text`."""
    return "sig_" + hashlib.sha256(f"{_SECRET}|{text}".encode()).hexdigest()[:40]


def _error(fmt: str, status: int, message: str) -> Rendered:
    if fmt == "anthropic":
        kind = "invalid_request_error" if status == 400 else "not_found_error"
        return _json(status, {"type": "error", "error": {"type": kind, "message": message}})
    return _json(
        status,
        {
            "error": {
                "message": message,
                "type": "invalid_request_error",
                "param": None,
                "code": None,
            }
        },
    )


# -- Chat Completions ---------------------------------------------------------------------


def chat_rules(body: dict[str, Any]) -> Rendered | None:
    if "codex" in str(body.get("model", "")):
        return _error("openai", 404, CODEX_404)
    return None


# -- Responses API ----------------------------------------------------------------------


def responses_rules(body: dict[str, Any]) -> Rendered | None:
    items = body.get("input")
    if isinstance(items, str):
        return None
    if not isinstance(items, list):
        return _error("responses", 400, "Missing required parameter: 'input'.")
    calls: set[str] = set()
    for index, item in enumerate(items):
        kind = item.get("type") or ("message" if "role" in item else "")
        if kind == "reasoning":
            problem = _reasoning_problem(item, body, items[index + 1 : index + 2])
            if problem is not None:
                return problem
        elif kind == "function_call":
            calls.add(str(item.get("call_id")))
        elif kind == "function_call_output" and str(item.get("call_id")) not in calls:
            return _error(
                "responses",
                400,
                f"No tool call found for function call output with call_id {item.get('call_id')}.",
            )
    return None


def _reasoning_problem(
    item: dict[str, Any], body: dict[str, Any], following: list[dict[str, Any]]
) -> Rendered | None:
    item_id = str(item.get("id"))
    encrypted = item.get("encrypted_content")
    if encrypted is None and body.get("store") is False:
        return _error(
            "responses",
            404,
            f"Item with id '{item_id}' not found. Items are not persisted when `store` is set "
            "to false. Try again with `store` set to true, or remove this item from your input.",
        )
    if encrypted is not None and encrypted != seal(item_id):
        return _error(
            "responses", 400, f"The encrypted content for item {item_id} could not be verified."
        )
    nxt = following[0] if following else {}
    if not (nxt.get("type") in ("function_call", "reasoning") or nxt.get("role") == "assistant"):
        return _error(
            "responses",
            400,
            f"Item '{item_id}' of type 'reasoning' was provided without its required "
            "following item.",
        )
    return None


def render_responses(
    turn: Turn, body: dict[str, Any], stream: bool, cache: PromptUsage
) -> Rendered:
    """A Responses API answer: reasoning (for a request that asks for it), the text as
    one assistant message, then each call, in that order, as the API streams them."""
    prompt, out = turn.usage(cache)
    model = str(body.get("model", ""))
    response_id = f"resp_{uuid.uuid4().hex[:20]}"
    reasoning = body.get("reasoning") if isinstance(body.get("reasoning"), dict) else None
    wants_encrypted = "reasoning.encrypted_content" in (body.get("include") or [])
    thinking = _thinking_text(turn) if reasoning is not None else ""
    reasoning_tokens = max(1, len(thinking) // 4) if reasoning is not None else 0
    events: list[tuple[str, dict[str, Any]]] = []
    output: list[dict[str, Any]] = []

    def item_events(item: dict[str, Any], inner: list[tuple[str, dict[str, Any]]]) -> None:
        index = len(output)
        added = {**item, "status": "in_progress"}
        if item["type"] == "reasoning":
            added = {"id": item["id"], "type": "reasoning", "summary": []}
        elif item["type"] == "message":
            added["content"] = []
        elif item["type"] == "function_call":
            added["arguments"] = ""
        events.append(("response.output_item.added", {"output_index": index, "item": added}))
        events.extend((name, {"output_index": index, **data}) for name, data in inner)
        events.append(("response.output_item.done", {"output_index": index, "item": item}))
        output.append(item)

    if reasoning is not None:
        rs_id = f"rs_{uuid.uuid4().hex[:20]}"
        shown = thinking if reasoning.get("summary") else ""
        item: dict[str, Any] = {
            "id": rs_id,
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": shown}] if shown else [],
        }
        if wants_encrypted:
            item["encrypted_content"] = seal(rs_id)
        inner: list[tuple[str, dict[str, Any]]] = []
        if shown:
            part = {"item_id": rs_id, "summary_index": 0}
            inner.append(
                (
                    "response.reasoning_summary_part.added",
                    {**part, "part": {"type": "summary_text", "text": ""}},
                )
            )
            inner += [
                ("response.reasoning_summary_text.delta", {**part, "delta": piece})
                for piece in _pieces(turn, shown)
            ]
            inner.append(("response.reasoning_summary_text.done", {**part, "text": shown}))
            inner.append(
                (
                    "response.reasoning_summary_part.done",
                    {**part, "part": {"type": "summary_text", "text": shown}},
                )
            )
        item_events(item, inner)
    if turn.text_chunks():
        msg_id = f"msg_{uuid.uuid4().hex[:20]}"
        where = {"item_id": msg_id, "content_index": 0}
        full = turn.full_text()
        inner = [
            (
                "response.content_part.added",
                {**where, "part": {"type": "output_text", "text": "", "annotations": []}},
            )
        ]
        inner += [
            ("response.output_text.delta", {**where, "delta": c, "logprobs": []})
            for c in turn.text_chunks()
        ]
        inner.append(("response.output_text.done", {**where, "text": full, "logprobs": []}))
        part = {"type": "output_text", "text": full, "annotations": []}
        inner.append(("response.content_part.done", {**where, "part": part}))
        item_events(
            {
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [part],
            },
            inner,
        )
    for call in turn.tool_calls:
        fc_id = f"fc_{uuid.uuid4().hex[:20]}"
        call_id = call.id if call.id is not None else f"call_{uuid.uuid4().hex[:20]}"
        arguments = call.arguments_text()
        inner = [
            ("response.function_call_arguments.delta", {"item_id": fc_id, "delta": piece})
            for piece in split_in_three(arguments)
        ]
        inner.append(
            ("response.function_call_arguments.done", {"item_id": fc_id, "arguments": arguments})
        )
        item_events(
            {
                "id": fc_id,
                "type": "function_call",
                "status": "completed",
                "call_id": call_id,
                "name": call.name,
                "arguments": arguments,
            },
            inner,
        )
    incomplete = turn.stop_reason in ("max_tokens", "max_output_tokens")
    usage = {
        "input_tokens": prompt.total,
        "input_tokens_details": {"cached_tokens": prompt.read},
        "output_tokens": out + reasoning_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
        "total_tokens": prompt.total + out + reasoning_tokens,
    }
    whole: dict[str, Any] = {
        "id": response_id,
        "object": "response",
        "created_at": 1_700_000_000,
        "model": model,
        "status": "incomplete" if incomplete else "completed",
        "output": output,
        "usage": usage,
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
    }
    if not stream:
        return _json(200, whole)
    start = {**whole, "status": "in_progress", "output": [], "usage": None}
    sequence = [
        ("response.created", {"response": start}),
        ("response.in_progress", {"response": start}),
        *events,
        ("response.incomplete" if incomplete else "response.completed", {"response": whole}),
    ]
    chunks = [
        _sse({"type": name, "sequence_number": number, **data}, name)
        for number, (name, data) in enumerate(sequence)
    ]
    return Rendered(200, dict(_SSE_HEADERS), chunks)


def _pieces(turn: Turn, text: str) -> list[str]:
    """How `text` (the turn's thinking) streams: the turn's own chunks when it gave a
    list, else in three."""
    return list(turn.thinking) if isinstance(turn.thinking, list) else split_in_three(text)


def _thinking_text(turn: Turn) -> str:
    return "".join(turn.thinking) if isinstance(turn.thinking, list) else turn.thinking


# -- Claude's thinking -------------------------------------------------------------------


def anthropic_thinking_on(body: dict[str, Any]) -> bool:
    thinking = body.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")


def anthropic_rules(body: dict[str, Any]) -> Rendered | None:
    messages = body.get("messages") or []
    for number, message in enumerate(messages):  # signatures hold with thinking on or off
        for block_number, block in enumerate(_blocks(message)):
            where = f"messages.{number}.content.{block_number}"
            if block.get("type") == "thinking" and block.get("signature") != seal(
                str(block.get("thinking"))
            ):
                return _error("anthropic", 400, f"{where}: Invalid `signature` in `thinking` block")
            if block.get("type") == "redacted_thinking" and not str(block.get("data")).startswith(
                "redacted_"
            ):
                return _error(
                    "anthropic", 400, f"{where}: Invalid `data` in `redacted_thinking` block"
                )
    if not anthropic_thinking_on(body):
        return None
    thinking = body["thinking"]
    if body.get("temperature") not in (None, 1):
        return _error(
            "anthropic",
            400,
            "`temperature` may only be set to 1 when thinking is enabled or in adaptive mode. "
            "Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/"
            "extended-thinking#important-considerations-when-using-extended-thinking",
        )
    if thinking["type"] == "enabled":
        budget = thinking.get("budget_tokens")
        if not isinstance(budget, int) or budget < 1024:
            return _error(
                "anthropic",
                400,
                "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
            )
        if not isinstance(body.get("max_tokens"), int) or body["max_tokens"] <= budget:
            said = (
                "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
                "documentation at https://docs.claude.com/en/docs/build-with-claude/"
                "extended-thinking#max-tokens-and-context-window-size"
            )
            return _error("anthropic", 400, said)
    return _last_turn_problem(messages)


def _last_turn_problem(messages: list[dict[str, Any]]) -> Rendered | None:
    """The last assistant message, when tool results close the conversation, must start
    with a thinking block."""
    if len(messages) < 2 or messages[-1].get("role") != "user":
        return None
    if not any(b.get("type") == "tool_result" for b in _blocks(messages[-1])):
        return None
    number = len(messages) - 2
    last = _blocks(messages[number])
    if messages[number].get("role") != "assistant" or not any(
        b.get("type") == "tool_use" for b in last
    ):
        return None
    first = last[0].get("type") if last else "nothing"
    if first in ("thinking", "redacted_thinking"):
        return None
    return _error(
        "anthropic",
        400,
        f"messages.{number}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
        f"`{first}`. When `thinking` is enabled, a final `assistant` message must start with a "
        "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We "
        "recommend you include thinking blocks from previous turns. To avoid this requirement, "
        "disable `thinking`. Please consult our documentation at "
        "https://docs.claude.com/en/docs/build-with-claude/extended-thinking",
    )


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def anthropic_thinking_blocks(turn: Turn, body: dict[str, Any]) -> int:
    """How many blocks `anthropic_thinking_events` streams."""
    if not anthropic_thinking_on(body):
        return 0
    return 2 if turn.redacted_thinking else 1


def anthropic_thinking_events(turn: Turn, body: dict[str, Any]) -> list[bytes]:
    """The thinking blocks (index 0 on) that open an answer when thinking is on; empty
    when it is off."""
    if not anthropic_thinking_on(body):
        return []
    thinking = _thinking_text(turn) or DEFAULT_THINKING
    events = [
        _sse(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""},
            },
            "content_block_start",
        ),
    ]
    events += [
        _sse(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "thinking_delta", "thinking": piece},
            },
            "content_block_delta",
        )
        for piece in _pieces(turn, thinking)
    ]
    events.append(
        _sse(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "signature_delta", "signature": seal(thinking)},
            },
            "content_block_delta",
        )
    )
    events.append(_sse({"type": "content_block_stop", "index": 0}, "content_block_stop"))
    if turn.redacted_thinking:
        data = "redacted_" + uuid.uuid4().hex
        events.append(
            _sse(
                {
                    "type": "content_block_start",
                    "index": 1,
                    "content_block": {"type": "redacted_thinking", "data": data},
                },
                "content_block_start",
            )
        )
        events.append(_sse({"type": "content_block_stop", "index": 1}, "content_block_stop"))
    return events


def anthropic_between(
    turn: Turn, body: dict[str, Any], beta: str
) -> Callable[[int], list[bytes]] | None:
    """A thinking block between tool calls, when the turn has one and the request allows
    interleaved thinking (the beta header, or adaptive thinking)."""
    interleaved = (
        "interleaved-thinking" in beta or (body.get("thinking") or {}).get("type") == "adaptive"
    )
    if not (turn.interleaved and anthropic_thinking_on(body) and interleaved):
        return None

    def block(index: int) -> list[bytes]:
        start = {"type": "thinking", "thinking": "", "signature": ""}
        delta = {"type": "thinking_delta", "thinking": turn.interleaved}
        signed = {"type": "signature_delta", "signature": seal(turn.interleaved)}
        return [
            _sse({"type": "content_block_start", "index": index, "content_block": start},
                 "content_block_start"),
            _sse({"type": "content_block_delta", "index": index, "delta": delta},
                 "content_block_delta"),
            _sse({"type": "content_block_delta", "index": index, "delta": signed},
                 "content_block_delta"),
            _sse({"type": "content_block_stop", "index": index}, "content_block_stop"),
        ]  # fmt: skip

    return block


def anthropic_thinking_tokens(turn: Turn, body: dict[str, Any]) -> int:
    if not anthropic_thinking_on(body):
        return 0
    return max(1, len(_thinking_text(turn) or DEFAULT_THINKING) // 4)


# -- Gemini's thoughts -------------------------------------------------------------------


def google_rules(body: dict[str, Any]) -> Rendered | None:
    config = (body.get("generationConfig") or {}).get("thinkingConfig") or {}
    if "thinkingBudget" in config and "thinkingLevel" in config:
        said = "You can only set only one of thinking budget and thinking level."
        return _json(400, {"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": said}})
    return None


def google_thought_parts(turn: Turn, body: dict[str, Any]) -> list[dict[str, Any]]:
    config = (body.get("generationConfig") or {}).get("thinkingConfig") or {}
    if not config.get("includeThoughts"):
        return []
    return [
        {"text": piece, "thought": True}
        for piece in _pieces(turn, _thinking_text(turn) or DEFAULT_THINKING)
    ]
