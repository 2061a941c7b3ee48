"""The stall check on a model stream: one timer per stream, not one per chunk.

A deadline around every `await` of the next chunk (`asyncio.timeout`) schedules and
cancels a timer per chunk: with 20 sessions streaming, thousands of timer handles a
second went through the loop's heap (~10% of the streaming CPU). Here the stream notes
when it started waiting, and one timer per stream looks at that note every
`stall_timeout` seconds; it cancels the waiting task only when the wait it sees has
lasted the whole timeout, which makes the check exactly as strict as a per-chunk deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

__all__ = ["StalledStream", "until_stalled"]


class StalledStream(TimeoutError):
    """The endpoint sent nothing for `stall_timeout` seconds (a transient failure)."""


class _Watchdog:
    """Cancels `task` once it has waited `timeout` s for the stream's next event."""

    def __init__(self, timeout: float) -> None:
        self.loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("a stream's stall check needs a task")
        self.task = task
        self.timeout = timeout
        self.cancelling = task.cancelling()  # cancellations that are not ours
        self.waiting_since: float | None = None  # set while awaiting the next event
        self.fired = False
        self._handle: asyncio.TimerHandle | None = self.loop.call_at(
            self.loop.time() + timeout, self._check
        )

    def _check(self) -> None:
        since = self.waiting_since
        now = self.loop.time()
        if since is not None and now - since >= self.timeout:
            self.fired = True
            self._handle = None
            self.task.cancel()
            return
        start = now if since is None else since
        self._handle = self.loop.call_at(start + self.timeout, self._check)

    def ours(self) -> bool:
        """Was the CancelledError being handled this watchdog's (and no one else's)?"""
        return self.fired and self.task.uncancel() <= self.cancelling

    def close(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None


async def until_stalled(stream: AsyncIterator[Any], timeout: float | None) -> AsyncIterator[Any]:
    """The stream's events; StalledStream when the next one takes over `timeout` s."""
    iterator = stream.__aiter__()
    if timeout is None:
        async for event in iterator:
            yield event
        return
    watch = _Watchdog(timeout)
    clock = watch.loop.time
    try:
        while True:
            watch.waiting_since = clock()
            try:
                event = await iterator.__anext__()
            except StopAsyncIteration:
                return
            except asyncio.CancelledError:
                if not watch.ours():
                    raise
                with contextlib.suppress(Exception):
                    await iterator.aclose()  # type: ignore[attr-defined]
                raise StalledStream(
                    f"no data from the model endpoint for {timeout:g} s ([model] stall_timeout)"
                ) from None
            watch.waiting_since = None
            yield event
    finally:
        watch.close()
