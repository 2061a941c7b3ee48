"""Conversation clean-up shared by every adapter before it maps messages to a wire format.

All three APIs reject a history where a tool call is not answered by its result right
after it, or where a result answers no call. A thread can hold either (a turn cut short
by Ctrl-C, a crash between call and result, hand-edited files), so adapters send
`paired_history(...)`: calls answered in order, missing results filled in, stray results
turned into plain user notes. Nothing is removed from the thread itself.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from loom.core.messages import AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage
from loom.llm.base import LlmRequest

MISSING_RESULT = "(no result: this tool call was interrupted before it finished)"
OMITTED_START = "(earlier conversation omitted)"


def system_prompt(request: LlmRequest) -> str:
    """The request's system prompt plus any system messages in the history, in order."""
    texts = [m.content for m in request.messages if isinstance(m, SystemMessage) and m.content]
    return system_text(request.system, texts)


def system_text(system: str, history_texts: Sequence[str]) -> str:
    """A request's system prompt followed by the system messages of its history."""
    return "\n\n".join([system, *history_texts] if system else history_texts)


def paired_history(messages: Sequence[Message]) -> list[Message]:
    """Non-system messages with every tool call immediately followed by its result,
    starting with a user message."""
    out = list(pair_segment(messages, []))
    if out and isinstance(out[0], AssistantMessage):
        # Anthropic and Gemini want the user to speak first; pruned history may not.
        out.insert(0, UserMessage(content=OMITTED_START))
    return out


def pair_segment(messages: Sequence[Message], system: list[str]) -> Iterator[Message]:
    """`messages` with every tool call immediately followed by its result (missing ones
    filled in, stray ones turned into user notes). System messages are left out; their
    texts are appended to `system`. Pairing looks no further than the tool results right
    after a call, so a history cut before a user or assistant message pairs the same in
    pieces as whole (`loom.llm._wire` relies on that)."""
    caller: AssistantMessage | None = None  # the message whose results are being gathered
    results: dict[str, ToolMessage] = {}
    for message in messages:
        if isinstance(message, SystemMessage):
            if message.content:
                system.append(message.content)
        elif isinstance(message, ToolMessage):
            if caller is None:
                yield _stray_result(message)
            else:
                results.setdefault(message.tool_call_id, message)
        else:
            if caller is not None:
                yield from _answered(caller, results)
                caller = None
            yield message
            if isinstance(message, AssistantMessage) and message.tool_calls:
                caller, results = message, {}
    if caller is not None:
        yield from _answered(caller, results)


def _answered(caller: AssistantMessage, results: dict[str, ToolMessage]) -> Iterator[Message]:
    """The results of `caller`'s calls in call order (missing ones filled in), then the
    results that answer none of them, as notes."""
    wanted = {call.id for call in caller.tool_calls}
    for call in caller.tool_calls:
        yield results.get(call.id) or ToolMessage(
            tool_call_id=call.id,
            tool_name=call.tool_name,
            content=MISSING_RESULT,
            is_error=True,
        )
    for result in results.values():
        if result.tool_call_id not in wanted:
            yield _stray_result(result)


def _stray_result(message: ToolMessage) -> UserMessage:
    return UserMessage(
        content=f"[result of an earlier {message.tool_name} call]\n{message.content}"
    )


def normalize_stop_reason(reason: str | None, *, has_tool_calls: bool) -> str:
    """Map each API's stop reason onto Anthropic's names, which the loop uses."""
    mapped = {
        None: "end_turn",
        "": "end_turn",
        "stop": "end_turn",
        "end_turn": "end_turn",
        "STOP": "end_turn",
        "tool_calls": "tool_use",
        "function_call": "tool_use",
        "tool_use": "tool_use",
        "length": "max_tokens",
        "max_tokens": "max_tokens",
        "MAX_TOKENS": "max_tokens",
        "content_filter": "refusal",
        "SAFETY": "refusal",
        "RECITATION": "refusal",
        "PROHIBITED_CONTENT": "refusal",
        "BLOCKLIST": "refusal",
        "refusal": "refusal",
        "stop_sequence": "stop_sequence",
        "pause_turn": "pause_turn",
    }.get(reason, str(reason).lower())
    if has_tool_calls and mapped == "end_turn":
        return "tool_use"  # Gemini says STOP even when it asks for tools
    return mapped
