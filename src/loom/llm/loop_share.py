"""Sharing the event loop between many sessions: bounded work per loop turn.

Two places where many sessions hold the loop at once:

- Streaming. A response that arrived faster than it is parsed (a burst, a busy loop)
  sits in the SDK's buffer and parses without ever waiting on the network, so a stream
  hands the loop back by itself. A fixed slice per stream made one loop turn cost that
  slice times the streams with a backlog: 20 streams at 2 ms held the loop ~40 ms a
  turn, and a timer due during a turn waited up to two turns (~90 ms). So the streams
  share one budget per loop turn: each gets `TURN_BUDGET_S / streams`, within
  [MIN_SLICE_S, MAX_SLICE_S] (a lone stream keeps its 2 ms; below the floor a yield's
  own cost would outgrow the work between yields).
- The start of a model call (context build, token counts, request body, the SDK's
  request building: 1-2 ms of CPU each). 20 sessions that become ready together each ran
  theirs in the same loop turn (40 ms). `room()` lets a step start only while the
  current loop turn has budget left, and the others wait for a later turn; the first
  step asking in a turn always starts (a turn kept full by streams must not starve a
  new call). Waiting steps start in the order they asked, one per later turn, and a
  step asking while others wait joins the end of the line.

The loop turn is timed by a callback (`_LoopTurn._tick`) queued once per turn while
anyone asks: the budget counts from when it ran.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections import deque
from collections.abc import Generator
from contextlib import contextmanager

TURN_BUDGET_S = 0.008
MIN_SLICE_S = 0.00025
MAX_SLICE_S = 0.002

clock = time.perf_counter  # a test may put a counting clock here
_lock = threading.Lock()
_streams = 0


def slice_s() -> float:
    """This stream's time on the loop before it yields, given the streams running now."""
    return min(MAX_SLICE_S, max(MIN_SLICE_S, TURN_BUDGET_S / max(1, _streams)))


def streams_running() -> int:
    return _streams


@contextmanager
def streaming() -> Generator[None]:
    """Counts a stream among the ones sharing the loop while it runs."""
    global _streams
    with _lock:
        _streams += 1
    try:
        yield
    finally:
        with _lock:
            _streams -= 1


class _LoopTurn:
    """When the current turn of one loop started (about), whether it is over budget, and
    the steps waiting for a later turn, oldest first."""

    def __init__(self) -> None:
        self._mark = clock() - TURN_BUDGET_S  # no turn timed yet: spent
        self._armed = False
        self.admitted = 0  # steps let in by room() in this turn
        self.line: deque[asyncio.Future[None]] = deque()

    def _tick(self) -> None:
        self._mark = clock()
        self._armed = False
        self.admitted = 0
        while self.line:  # a new turn: the step that has waited longest starts in it
            ticket = self.line.popleft()
            if not ticket.done():  # (a cancelled wait is skipped)
                ticket.set_result(None)
                self.admitted = 1
                break
        if self.line:
            self.arm()

    def arm(self) -> None:
        """Time the next loop turn (a callback queued once per turn while anyone asks)."""
        if not self._armed:
            self._armed = True
            asyncio.get_running_loop().call_soon(self._tick)

    def spent(self) -> bool:
        self.arm()
        return clock() - self._mark >= TURN_BUDGET_S


_turns: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopTurn] = (
    weakref.WeakKeyDictionary()
)


def loop_turn() -> _LoopTurn:
    loop = asyncio.get_running_loop()
    turn = _turns.get(loop)
    if turn is None:
        turn = _turns[loop] = _LoopTurn()
    return turn


async def room() -> None:
    """Returns when this loop turn has room for a step of CPU work (a few ms): at once
    if no one is waiting and the turn has budget left or no step has started in it yet,
    else in a later turn, in the order the steps asked. (Without the line, a session
    whose every step overran the budget came back first in each turn and took it: a
    session asking after it never started.)"""
    turn = loop_turn()
    if not turn.line and not (turn.spent() and turn.admitted):
        turn.admitted += 1
        return
    ticket = asyncio.get_running_loop().create_future()
    turn.line.append(ticket)
    turn.arm()
    await ticket  # a later turn's tick let it in (and counted it)
