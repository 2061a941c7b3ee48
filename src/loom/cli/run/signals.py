"""Ctrl-C and SIGTERM end `loom run` wherever it waits, the same way each time: the turn
(if one runs) is interrupted, the session stops (open calls answered, the thread saved,
commands and servers stopped, the session's temp folder removed) and the run exits 1.

- Reading the task from stdin (before any event loop): `terminate_interrupts()` turns
  SIGTERM into the KeyboardInterrupt Ctrl-C raises ("Aborted!", exit 1); nothing has
  started yet.
- All of `run_headless`: `StopSignals` handles both on the event loop. While a turn runs
  its `on_stop` ends the turn; before that the run's task is cancelled, and its clean-up
  runs; during the final clean-up a signal is noted and changes nothing (the thread is
  being saved).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Iterator
from types import FrameType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _interrupt(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def terminate_interrupts() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt in the body, as Ctrl-C does (main thread only)."""
    try:
        previous = signal.signal(signal.SIGTERM, _interrupt)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class StopSignals:
    """Ctrl-C and SIGTERM for the task that runs `loom run` (made inside it)."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.task = asyncio.current_task()
        self.received: list[str] = []  # signal names, in order
        self.on_stop: Callable[[str], None] | None = None  # a running turn's stop
        self._cancelled = False
        self._quiet = False
        for signum in STOP_SIGNALS:
            self.loop.add_signal_handler(signum, self._receive, signum)

    def _receive(self, signum: int) -> None:
        name = signal.Signals(signum).name
        self.received.append(name)
        if self.on_stop is not None:
            self.on_stop(name)
        elif not self._quiet and not self._cancelled and self.task is not None:
            self._cancelled = True
            self.task.cancel()

    def finishing(self) -> None:
        """The clean-up has begun: a signal no longer cancels anything."""
        self.on_stop = None
        self._quiet = True

    def absorb(self) -> bool:
        """After a CancelledError: True (and the cancel undone) when it was ours."""
        if not self._cancelled or self.task is None:
            return False
        self.task.uncancel()
        return True

    def close(self) -> None:
        for signum in STOP_SIGNALS:
            self.loop.remove_signal_handler(signum)
