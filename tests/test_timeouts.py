"""loom._timeouts.within: a time limit on an await that never hides a cancellation
(Python 3.11's asyncio.wait_for returns the result instead when the cancel lands just as
the awaited thing finishes)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from loom._timeouts import within


async def test_a_cancel_landing_as_the_awaited_future_finishes_is_not_lost() -> None:
    inner = asyncio.get_running_loop().create_future()
    waiting = asyncio.create_task(within(inner, 10))
    await asyncio.sleep(0)  # `waiting` now awaits `inner`
    inner.set_result("finished")  # done...
    waiting.cancel()  # ...and cancelled in the same loop turn
    with pytest.raises(asyncio.CancelledError):
        await waiting


async def test_a_cancel_landing_as_a_worker_thread_returns_is_not_lost() -> None:
    # The shape of a turn's repo-map fetch: the thread has answered and its result is on
    # its way back through the loop (a few callbacks) when the interrupt comes. Each
    # round cancels one loop turn later along that way.
    for hops in range(6):
        returning = threading.Event()

        def work(returning: threading.Event = returning) -> str:
            returning.set()
            return "map"

        waiting = asyncio.create_task(within(asyncio.to_thread(work), 10))
        while not returning.is_set():  # until the thread runs
            await asyncio.sleep(0)
        time.sleep(0.02)  # the loop is held (no await) while the thread returns
        for _ in range(hops):
            await asyncio.sleep(0)
        if waiting.cancel():  # not finished yet: the cancel must win
            with pytest.raises(asyncio.CancelledError):
                await waiting
        else:
            assert waiting.result() == "map"


async def test_the_limit_raises_timeout_error_and_cancels_the_await() -> None:
    cancelled = asyncio.Event()

    async def slow() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    with pytest.raises(TimeoutError):
        await within(slow(), 0.01)
    assert cancelled.is_set()
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]


async def test_no_limit_and_a_quick_answer_return_the_value() -> None:
    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    assert await within(answer(), None) == 42
    assert await within(answer(), 10) == 42
