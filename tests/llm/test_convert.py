"""History clean-up every adapter relies on: calls and results always paired."""

from __future__ import annotations

from loom.core.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from loom.llm._convert import MISSING_RESULT, normalize_stop_reason, paired_history, system_prompt
from loom.llm.base import LlmRequest


def _call(call_id: str) -> ToolCall:
    return ToolCall(id=call_id, tool_name="shell", arguments_json={"command": "ls"})


def test_results_follow_their_calls_in_call_order_and_strays_become_notes() -> None:
    history = [
        SystemMessage(content="rules"),
        ToolMessage(tool_call_id="old", tool_name="shell", content="orphan output"),
        AssistantMessage(tool_calls=[_call("a"), _call("b"), _call("c")]),
        ToolMessage(tool_call_id="c", tool_name="shell", content="C"),
        ToolMessage(tool_call_id="zzz", tool_name="shell", content="stray"),
        ToolMessage(tool_call_id="a", tool_name="shell", content="A"),
        ToolMessage(tool_call_id="a", tool_name="shell", content="A again"),
        UserMessage(content="next"),
    ]
    out = paired_history(history)
    kinds = [(type(m).__name__, getattr(m, "tool_call_id", None)) for m in out]
    assert kinds == [
        ("UserMessage", None),
        ("AssistantMessage", None),
        ("ToolMessage", "a"),
        ("ToolMessage", "b"),
        ("ToolMessage", "c"),
        ("UserMessage", None),
        ("UserMessage", None),
    ]
    assert "orphan output" in out[0].content
    assert [out[2].content, out[3].content, out[4].content] == ["A", MISSING_RESULT, "C"]
    assert isinstance(out[3], ToolMessage)
    assert out[3].is_error
    assert "stray" in out[5].content and out[6].content == "next"


def test_system_prompt_gathers_system_messages() -> None:
    request = LlmRequest(
        model="m",
        system="base",
        messages=[SystemMessage(content="extra"), UserMessage(content="hi")],
    )
    assert system_prompt(request) == "base\n\nextra"


def test_stop_reasons_use_one_vocabulary() -> None:
    assert normalize_stop_reason("stop", has_tool_calls=False) == "end_turn"
    assert normalize_stop_reason("tool_calls", has_tool_calls=True) == "tool_use"
    assert normalize_stop_reason("STOP", has_tool_calls=True) == "tool_use"
    assert normalize_stop_reason("length", has_tool_calls=False) == "max_tokens"
    assert normalize_stop_reason("SAFETY", has_tool_calls=False) == "refusal"


def test_history_always_starts_with_the_user() -> None:
    from loom.llm._convert import OMITTED_START

    out = paired_history([AssistantMessage(content="as I said"), UserMessage(content="ok")])
    assert isinstance(out[0], UserMessage) and out[0].content == OMITTED_START
    assert [type(m).__name__ for m in out] == ["UserMessage", "AssistantMessage", "UserMessage"]
