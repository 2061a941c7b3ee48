"""The stall check on a model stream: one timer per stream (not one per chunk), still
as strict as a deadline on every chunk, and never mistaken for an interrupt."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from loom.session.runtime.stall_watch import StalledStream, until_stalled


async def chunks(count: int) -> AsyncIterator[int]:
    for n in range(count):
        await asyncio.sleep(0)  # each chunk waits on the loop, as a network read does
        yield n


async def test_a_long_stream_schedules_a_handful_of_timers_not_one_per_chunk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loop = asyncio.get_running_loop()
    scheduled = []
    call_at = loop.call_at

    def counting_call_at(when: float, callback: Any, *args: Any, **kwargs: Any) -> Any:
        scheduled.append(callback)
        return call_at(when, callback, *args, **kwargs)

    monkeypatch.setattr(loop, "call_at", counting_call_at)
    got = [n async for n in until_stalled(chunks(2_000), timeout=60.0)]
    assert got == list(range(2_000))
    assert len(scheduled) <= 2  # a per-chunk deadline schedules 2,000


async def test_a_stream_that_goes_quiet_is_a_stall_and_is_closed() -> None:
    closed = asyncio.Event()

    async def quiet() -> AsyncIterator[str]:
        try:
            yield "first"
            await asyncio.Event().wait()  # the endpoint sends nothing more
            yield "never"
        finally:
            closed.set()

    got = []
    with pytest.raises(StalledStream, match="stall_timeout"):
        async for event in until_stalled(quiet(), timeout=0.05):
            got.append(event)
    assert got == ["first"] and closed.is_set()
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]


async def test_time_spent_by_the_consumer_between_chunks_is_not_a_stall() -> None:
    got = []
    async for event in until_stalled(chunks(3), timeout=0.05):
        got.append(event)
        await asyncio.sleep(0.12)  # longer than the timeout, but not waiting on the stream
    assert got == [0, 1, 2]


async def test_an_interrupt_while_waiting_is_a_cancellation_not_a_stall() -> None:
    waiting = asyncio.Event()

    async def slow() -> AsyncIterator[str]:
        waiting.set()
        await asyncio.Event().wait()
        yield "never"

    async def consume() -> list[str]:
        return [event async for event in until_stalled(slow(), timeout=30.0)]

    task = asyncio.create_task(consume())
    await waiting.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
