"""Claude's extended thinking through the real SDK against the fake server, which refuses
what the API refuses: a tool round whose answer lost its signed thinking, a changed
signature, a temperature or a `max_tokens` at or under the budget."""

from __future__ import annotations

import httpx
import pytest

from loom.core.messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from loom.llm.anthropic import INTERLEAVED_BETA
from loom.llm.base import LlmError, ThinkingDelta, collect
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.providers import provider_for
from tests.support.reasoning import answered, replay, tool_request


async def test_thinking_blocks_come_back_first_and_unchanged(server: FakeLlmServer) -> None:
    server.add(
        Turn(
            thinking="Read it before answering.",
            redacted_thinking=True,
            tool_calls=[FakeToolCall("file_read", {"path": "a.py"})],
        ),
        Turn(text="Done."),
    )
    provider = provider_for("anthropic", server)
    history: list[Message] = [UserMessage(content="read a.py")]
    events = [
        e async for e in provider.stream(tool_request("claude-sonnet-4-5", history, effort="low"))
    ]
    shown = "".join(e.text for e in events if isinstance(e, ThinkingDelta))
    assert shown == "Read it before answering."
    first = await collect(replay(events))
    assert [p.kind for p in first.reasoning] == ["thinking", "redacted_thinking"]
    assert first.reasoning[0].signature and first.reasoning[1].data

    second = await collect(
        provider.stream(tool_request("claude-sonnet-4-5", answered(history, first), effort="low"))
    )
    assert second.content == "Done."
    sent = server.requests[-1]
    blocks = sent.json["messages"][1]["content"]
    assert [b["type"] for b in blocks] == ["thinking", "redacted_thinking", "tool_use"]
    assert blocks[0]["signature"] == first.reasoning[0].signature
    assert sent.json["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    assert sent.json["max_tokens"] > 4096 and "temperature" not in sent.json
    assert sent.headers["anthropic-beta"] == INTERLEAVED_BETA


async def test_adaptive_models_take_an_effort(server: FakeLlmServer) -> None:
    server.add(Turn(text="hi"))
    provider = provider_for("anthropic", server)
    await collect(
        provider.stream(
            tool_request(
                "claude-sonnet-4-6", [UserMessage(content="hi")], effort="high", temperature=0.3
            )
        )
    )
    sent = server.requests[-1]
    assert sent.json["thinking"] == {"type": "adaptive"}
    assert sent.json["output_config"] == {"effort": "high"} and "temperature" not in sent.json
    assert "anthropic-beta" not in sent.headers


async def test_no_effort_no_thinking(server: FakeLlmServer) -> None:
    server.add(Turn(text="hi"))
    provider = provider_for("anthropic", server)
    response = await collect(
        provider.stream(tool_request("claude-sonnet-4-6", [UserMessage(content="hi")]))
    )
    assert "thinking" not in server.requests[-1].json and not response.reasoning


async def test_a_tool_round_begun_without_thinking_finishes_without_it(
    server: FakeLlmServer,
) -> None:
    """Effort turned on mid-turn (or a thread from another model): the answer that asked
    for the tools has no thinking of this model's to send back, so this call thinks not."""
    history: list[Message] = [
        UserMessage(content="read a.py"),
        AssistantMessage(tool_calls=[ToolCall(id="toolu_1", tool_name="file_read")]),
        ToolMessage(tool_call_id="toolu_1", tool_name="file_read", content="ok"),
    ]
    server.add(Turn(text="Done."))
    provider = provider_for("anthropic", server)
    done = await collect(provider.stream(tool_request("claude-sonnet-4-5", history, effort="high")))
    assert done.content == "Done." and "thinking" not in server.requests[-1].json


async def test_another_models_thinking_is_left_out(server: FakeLlmServer) -> None:
    server.add(Turn(thinking="mine", tool_calls=[FakeToolCall("file_read", {"path": "a"})]))
    provider = provider_for("anthropic", server)
    history: list[Message] = [UserMessage(content="go")]
    first = await collect(provider.stream(tool_request("claude-sonnet-4-5", history, effort="low")))
    server.add(Turn(text="fine"))
    later = await collect(
        provider.stream(tool_request("claude-opus-4-5", answered(history, first), effort="low"))
    )
    assert later.content == "fine"
    assert [b["type"] for b in server.requests[-1].json["messages"][1]["content"]] == ["tool_use"]


async def test_a_changed_signature_is_refused_as_the_api_refuses_it(server: FakeLlmServer) -> None:
    server.add(Turn(thinking="mine", tool_calls=[FakeToolCall("file_read", {"path": "a"})]))
    provider = provider_for("anthropic", server)
    history: list[Message] = [UserMessage(content="go")]
    first = await collect(provider.stream(tool_request("claude-sonnet-4-5", history, effort="low")))
    first.reasoning = [first.reasoning[0].model_copy(update={"text": "edited"})]
    with pytest.raises(LlmError) as caught:
        await collect(
            provider.stream(
                tool_request("claude-sonnet-4-5", answered(history, first), effort="low")
            )
        )
    assert caught.value.status == 400 and "Invalid `signature`" in str(caught.value)


def test_the_fake_refuses_a_tool_round_without_its_thinking(server: FakeLlmServer) -> None:
    """The rule the adapter keeps, as the API words it."""
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 9000,
        "thinking": {"type": "enabled", "budget_tokens": 2000},
        "messages": [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "x", "input": {}}],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}],
            },
        ],
    }
    answer = httpx.post(f"{server.base_url}/v1/messages", json=body)
    assert answer.status_code == 400
    assert "Expected `thinking` or `redacted_thinking`, but found `tool_use`" in answer.text
    body["temperature"] = 0.5
    del body["messages"][1:]
    assert "temperature" in httpx.post(f"{server.base_url}/v1/messages", json=body).text
    body.pop("temperature")
    body["max_tokens"] = 2000
    assert "greater than" in httpx.post(f"{server.base_url}/v1/messages", json=body).text


async def test_interleaved_thinking_goes_back_between_the_calls_it_came_between(
    server: FakeLlmServer,
) -> None:
    calls = [FakeToolCall("file_read", {"path": "a.py"}), FakeToolCall("file_read", {"path": "b"})]
    server.add(
        Turn(thinking="Read a first.", interleaved="Now b.", tool_calls=calls),
        Turn(text="Both read."),
    )
    provider = provider_for("anthropic", server)
    history: list[Message] = [UserMessage(content="read a and b")]
    first = await collect(provider.stream(tool_request("claude-sonnet-4-5", history, effort="low")))
    assert [(p.text, p.after_calls) for p in first.reasoning] == [
        ("Read a first.", None),
        ("Now b.", 1),
    ]
    request = tool_request("claude-sonnet-4-5", answered(history, first), effort="low")
    assert (await collect(provider.stream(request))).content == "Both read."
    blocks = server.requests[-1].json["messages"][1]["content"]
    assert [b["type"] for b in blocks] == ["thinking", "tool_use", "thinking", "tool_use"]
    assert blocks[2]["thinking"] == "Now b."
