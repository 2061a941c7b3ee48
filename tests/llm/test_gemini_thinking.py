"""Gemini's thinking through the real SDK against the fake server: thinkingConfig by
model family, thought summaries shown (never as the answer), signatures round-trip."""

from __future__ import annotations

from loom.core.messages import AssistantMessage, Message, ToolMessage, UserMessage
from loom.llm.base import TextDelta, ThinkingDelta, collect
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.providers import provider_for
from tests.support.reasoning import replay, tool_request


async def test_budget_models_get_a_budget_and_show_their_thoughts(server: FakeLlmServer) -> None:
    server.add(Turn(thinking="Weigh the two options.", text="Option A."))
    provider = provider_for("google", server)
    events = [
        e
        async for e in provider.stream(
            tool_request("gemini-2.5-flash", [UserMessage(content="A or B?")], effort="medium")
        )
    ]
    thinking = server.requests[-1].json["generationConfig"]["thinkingConfig"]
    assert thinking == {"includeThoughts": True, "thinkingBudget": 8192}
    assert (
        "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "Weigh the two options."
    )
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Option A."
    response = await collect(replay(events))
    assert response.usage.reasoning_tokens and [p.kind for p in response.reasoning] == ["thought"]


async def test_gemini_3_takes_a_level(server: FakeLlmServer) -> None:
    server.add(Turn(text="ok"), Turn(text="ok"))
    provider = provider_for("google", server)
    await collect(
        provider.stream(tool_request("gemini-3-pro", [UserMessage(content="hi")], effort="minimal"))
    )
    await collect(
        provider.stream(
            tool_request("gemini-3-flash", [UserMessage(content="hi")], effort="medium")
        )
    )
    levels = [
        r.json["generationConfig"]["thinkingConfig"]["thinkingLevel"] for r in server.requests
    ]
    assert levels == ["low", "medium"]


async def test_a_model_without_thinking_gets_no_thinking_config(server: FakeLlmServer) -> None:
    server.add(Turn(text="ok"))
    provider = provider_for("google", server)
    await collect(
        provider.stream(
            tool_request("gemini-2.0-flash", [UserMessage(content="hi")], effort="high")
        )
    )
    assert "thinkingConfig" not in server.requests[-1].json["generationConfig"]


async def test_thought_signatures_still_round_trip_with_thinking_on(server: FakeLlmServer) -> None:
    server.add(
        Turn(
            thinking="Look first.",
            tool_calls=[
                FakeToolCall("file_read", {"path": "a"}, id="c1", thought_signature="c2ln")
            ],
        ),
        Turn(text="done"),
    )
    provider = provider_for("google", server)
    history: list[Message] = [UserMessage(content="go")]
    first = await collect(provider.stream(tool_request("gemini-3-pro", history, effort="high")))
    history += [
        AssistantMessage(tool_calls=first.tool_calls, reasoning=first.reasoning),
        ToolMessage(tool_call_id="c1", tool_name="file_read", content="ok"),
    ]
    await collect(provider.stream(tool_request("gemini-3-pro", history, effort="high")))
    model_turn = server.requests[-1].json["contents"][1]
    assert model_turn["parts"] == [
        {
            "functionCall": {"id": "c1", "name": "file_read", "args": {"path": "a"}},
            "thoughtSignature": "c2ln",
        },
    ]  # thought summaries are shown, not sent back
