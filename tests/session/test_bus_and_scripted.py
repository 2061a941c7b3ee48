"""The event bus (bounded, never blocking) and the scripted provider."""

from __future__ import annotations

import asyncio

import pytest

from loom.core.events import TextDeltaEvent
from loom.llm.base import LlmError, LlmRequest, StreamEnd, TextDelta, ToolCallReady, collect
from loom.llm.scripted import ScriptedProvider, ScriptedTurn, tool_turn
from loom.session import EventBus


def delta(n: int) -> TextDeltaEvent:
    return TextDeltaEvent(session_id="s", text=str(n))


async def test_a_slow_subscriber_never_blocks_the_publisher() -> None:
    bus = EventBus()
    slow = bus.subscribe("session:s", maxsize=5)
    fast = bus.subscribe("session:s")
    for n in range(100):
        assert bus.publish("session:s", delta(n)) == 2
    assert [e.text for e in slow.drain()] == ["95", "96", "97", "98", "99"]
    assert slow.dropped == 95
    assert len(fast.drain()) == 100 and fast.dropped == 0


async def test_topics_are_separate_and_close_unsubscribes() -> None:
    bus = EventBus()
    with bus.subscribe("session:a") as a:
        b = bus.subscribe("session:b")
        bus.publish("session:a", delta(1))
        assert [e.text for e in a.drain()] == ["1"] and b.drain() == []
    assert bus.subscriber_count("session:a") == 0
    assert bus.publish("session:a", delta(2)) == 0


async def test_listeners_are_called_in_order_and_their_errors_contained() -> None:
    bus = EventBus()
    got = []

    def broken(event) -> None:
        raise RuntimeError("listener bug")

    unsubscribe = bus.listen("t", got.append)
    bus.listen("t", broken)
    bus.publish("t", delta(1))
    bus.publish("t", delta(2))
    assert [e.text for e in got] == ["1", "2"]
    unsubscribe()
    bus.publish("t", delta(3))
    assert len(got) == 2


async def test_subscription_iterates_asynchronously() -> None:
    bus = EventBus()
    sub = bus.subscribe("t")

    async def producer() -> None:
        for n in range(3):
            await asyncio.sleep(0)
            bus.publish("t", delta(n))

    task = asyncio.create_task(producer())
    got = [(await sub.get(1)).text for _ in range(3)]
    await task
    assert got == ["0", "1", "2"]


def request() -> LlmRequest:
    return LlmRequest(model="m", messages=[])


async def test_scripted_provider_streams_text_tools_and_usage() -> None:
    provider = ScriptedProvider(
        [ScriptedTurn(text="abcdefgh", chunk_size=3), tool_turn("t", {"x": 1}, id="c1")]
    )
    events = [e async for e in provider.stream(request())]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["abc", "def", "gh"]
    assert events[-1] == StreamEnd("end_turn")
    response = await collect(provider.stream(request()))
    assert response.tool_calls[0].id == "c1" and response.stop_reason == "tool_use"
    assert len(provider.requests) == 2 and provider.remaining == 0


async def test_scripted_provider_errors_callables_and_exhaustion() -> None:
    provider = ScriptedProvider(
        [
            ScriptedTurn(
                text="partial", error=LlmError("cut", transient=True), text_before_error=True
            ),
            lambda req: f"{len(req.messages)} messages",
        ]
    )
    seen = []
    with pytest.raises(LlmError, match="cut"):
        async for event in provider.stream(request()):
            seen.append(event)
    assert seen == [TextDelta("partial")]
    assert (await collect(provider.stream(request()))).content == "0 messages"
    with pytest.raises(LlmError, match="no response left") as info:
        await collect(provider.stream(request()))
    assert info.value.transient is False
    assert not any(isinstance(e, ToolCallReady) for e in seen)
