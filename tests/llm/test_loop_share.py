"""Many sessions on one event loop: bounded work per loop turn (counts, on a fake clock).

Streams with a backlog hand the loop back after a slice that shrinks as more streams run,
and the CPU steps that start a model call wait for room in the loop turn, so 20 sessions
never do all their work in one turn."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from typing import Any

import pytest

from loom.llm import loop_share
from loom.llm._errors import sdk_stream


class FakeClock:
    """Moves only when told: `step` per reading, or by `advance`."""

    def __init__(self, step: float = 0.0) -> None:
        self.now = 1000.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class TurnMarks:
    """A task that notes each loop turn in `log` (it runs once per turn)."""

    def __init__(self, log: list[Any]) -> None:
        self.log = log

    async def run(self) -> None:
        while True:
            self.log.append("turn")
            await asyncio.sleep(0)


def longest_run(log: list[Any]) -> int:
    return max(len(list(group)) for _, group in itertools.groupby(log))


def steps_per_turn(log: list[Any]) -> list[int]:
    """How many entries came between two turn marks, for every turn that had any."""
    groups = itertools.groupby(log, lambda entry: entry == "turn")
    return [len(list(group)) for is_turn, group in groups if not is_turn]


async def test_twenty_streams_with_a_backlog_take_turns_in_short_slices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # every reading of the clock is 0.1 ms of parsing: a lone stream keeps the loop for
    # its 2 ms slice (20 events), twenty share one turn's budget (0.4 ms: 4 events)
    monkeypatch.setattr(loop_share, "clock", FakeClock(step=0.0001))
    log: list[int] = []

    async def opened() -> None:
        return None

    def backlog(name: int) -> Any:
        async def consume(_: Any) -> AsyncIterator[int]:
            for _ in range(200):
                yield name  # all of it already buffered: no await in between

        return consume

    async def one(name: int) -> None:
        async for event in sdk_stream(
            opened, backlog(name), provider="fake", endpoint="x", key_hint="KEY"
        ):
            log.append(event)

    await asyncio.gather(*(one(n) for n in range(20)))
    assert len(log) == 20 * 200
    # once all twenty run (the first, alone, and the last few get longer slices): 4-5
    # events in a row; a fixed 2 ms slice per stream ran 20
    all_started = max(log.index(n) for n in range(20))
    assert longest_run(log[all_started : 20 * 150]) <= 5
    assert loop_share.streams_running() == 0


async def test_twenty_calls_starting_together_spread_their_work_over_loop_turns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = FakeClock()
    monkeypatch.setattr(loop_share, "clock", clock)
    log: list[Any] = []
    marks = asyncio.create_task(TurnMarks(log).run())
    await asyncio.sleep(0)

    async def start_a_call(name: int) -> None:
        for _ in range(3):  # context, request body, the SDK's request: 3 ms each
            await loop_share.room()
            clock.advance(0.003)
            log.append(name)

    await asyncio.gather(*(start_a_call(n) for n in range(20)))
    marks.cancel()
    steps = steps_per_turn(log)
    assert sum(steps) == 60
    # 8 ms of budget: at most 3 steps start in one turn (without the gate: all 20)
    assert max(steps) <= 3


async def test_a_turn_always_over_budget_still_lets_one_step_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # every reading of the clock finds the turn's budget spent (streams keep it full)
    monkeypatch.setattr(loop_share, "clock", FakeClock(step=0.010))
    log: list[Any] = []
    marks = asyncio.create_task(TurnMarks(log).run())

    async def start_a_call(name: int) -> None:
        for _ in range(3):
            await loop_share.room()
            log.append(name)

    await asyncio.gather(*(start_a_call(n) for n in range(4)))
    marks.cancel()
    steps = steps_per_turn(log)
    assert steps == [1] * 12  # one step per turn: none starves, none piles up


async def test_a_session_whose_steps_overrun_the_turn_does_not_starve_another(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A session grinding through tool rounds with no I/O, each step longer than a turn's
    # budget (a loaded machine, a long history), came back to the gate first in every
    # turn and took it; a quick session asking after it waited for ever (a CI run hung).
    clock = FakeClock()
    monkeypatch.setattr(loop_share, "clock", clock)
    busy_steps = 0

    async def busy() -> None:
        nonlocal busy_steps
        while True:
            await loop_share.room()
            clock.advance(0.020)  # 20 ms of context building: over the 8 ms budget
            busy_steps += 1
            await asyncio.sleep(0)  # the turn's slice is used up: it yields

    async def quick() -> None:
        for _ in range(3):
            await loop_share.room()
            clock.advance(0.001)

    grinding = asyncio.create_task(busy())
    await asyncio.sleep(0)
    await asyncio.wait_for(quick(), 5)
    grinding.cancel()
    assert busy_steps <= 10  # the quick session's three steps waited a few turns at most
