"""ThreadSaver: saves a session's thread after every step, without stalling the loop.

`request()` takes a copy of the thread as it is now and returns at once; a job in the
writer thread (the manager's `SaveWriter`: fsync never blocks other sessions, and the
store is used by one thread) writes it. Requests coalesce: while one write is in
flight, and, for a request that follows the previous one within `GATHER_SECONDS`
(steps in quick succession), for up to that long (the writer holds the job,
`SaveWriter.post_soon`); the job writes the latest copy when it runs. So the states
reach disk in the order they were requested, a step costs nothing when disk is slower
than the agent, a quick turn's four saves wake the writer thread twice, and at most
the steps of the last `GATHER_SECONDS` or of one write are at risk in a crash.
`flush()` posts a held job at once and waits until everything requested so far is on
disk; the session flushes at the end of every turn, before asking a person for
permission, and at shutdown. What is held when the writer shuts down (or the process
exits) is written first.

The writer job hands the loop nothing back unless someone waits in `flush()` or a write
failed: no task and no round trip through the loop per save (a turn saves four times;
each round trip cost a task, a future and loop iterations, more than the write itself
when the store keeps the thread in memory).

Each copy first bumps the thread's version (`Thread.touch`) and is shallow, with its
own lists, so the session can keep appending while the copy is serialised.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from loom.core.thread import Thread
from loom.session.runtime.save_writer import SaveWriter

log = logging.getLogger(__name__)

SaveFunction = Callable[[Thread], None]
GATHER_SECONDS = 0.01  # how long an idle writer waits for more of a turn's saves
M = TypeVar("M", bound=BaseModel)

_own_writer: SaveWriter | None = None  # for savers given no executor


def _writer() -> SaveWriter:
    global _own_writer
    if _own_writer is None:
        _own_writer = SaveWriter()
    return _own_writer


class ThreadSaver:
    def __init__(
        self,
        thread: Callable[[], Thread],
        save: SaveFunction,
        *,
        on_error: Callable[[BaseException], None] | None = None,
        executor: Executor | None = None,
    ) -> None:
        self._thread = thread
        self._save = save
        self._on_error = on_error
        self._executor = executor  # one writer thread per manager: the store is not threadsafe
        # Shared with the writer thread, under `_lock`:
        self._lock = threading.Lock()
        self._pending: tuple[int, Thread] | None = None  # the newest copy not yet written
        self._writing = False  # a writer job is queued or running
        self._attempted = 0  # the newest request whose copy was written (or failed)
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []  # flush(): up to which
        self._loop: asyncio.AbstractEventLoop | None = None
        self.requests = 0
        self._last_request = float("-inf")  # loop time of the latest request
        self.writes = 0
        self.last_error: BaseException | None = None

    def request(self) -> None:
        loop = asyncio.get_running_loop()
        copy = _detached_copy(self._thread())
        # Only steps in quick succession are gathered: the first save after a pause (a
        # person's message, a model's answer after seconds) goes out at once, so a real
        # session's saves are as prompt as ever and sessions starting together save
        # before they stream, not in one burst in the middle of it.
        now = loop.time()
        quick, self._last_request = now - self._last_request < GATHER_SECONDS, now
        with self._lock:
            self.requests += 1
            self._pending = (self.requests, copy)
            self._loop = loop
            if self._writing:  # the job queued, held or in flight writes this copy
                return
            self._writing = True
        self._post(GATHER_SECONDS if quick else 0)

    def _post(self, delay: float = 0) -> None:
        """Queue one write job for this thread, behind the jobs other sessions queued
        (`delay`: the writer may hold it that long, to gather more requests)."""
        executor = self._executor_in_use()
        try:
            if isinstance(executor, SaveWriter):
                executor.post_soon(self._write_next, delay)
            else:
                executor.submit(self._write_next)
        except RuntimeError as exc:  # the executor was shut down
            with self._lock:
                self._writing = False
                self._pending = None
                self._finished(self.requests, exc)

    def _executor_in_use(self) -> Executor:
        return self._executor or _writer()

    async def flush(self) -> None:
        """Wait until every requested save has been attempted. Errors were reported
        through `on_error`; `last_error` holds the latest (None after a good write)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            target = self.requests
            if self._attempted >= target:
                return
            waiter = loop.create_future()
            self._waiters.append((target, waiter))
            self._loop = loop
        executor = self._executor_in_use()
        if isinstance(executor, SaveWriter):
            executor.release(self._write_next)  # held to gather requests: write it now
        try:
            await waiter
        finally:
            with self._lock:
                if (target, waiter) in self._waiters:
                    self._waiters.remove((target, waiter))

    async def close(self) -> None:
        await self.flush()

    def cancel(self) -> None:
        """Stop writing (a restart reloads from disk). Pending changes are dropped; a
        write already under way still lands."""
        with self._lock:
            self._pending = None
            self._attempted = self.requests
            waiters, self._waiters = self._waiters, []
        for _, waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    # -- in the writer thread ----------------------------------------------------------

    def _write_next(self) -> None:
        """Writes the pending copy. A newer one asked for meanwhile gets a job of its
        own, queued behind the other sessions' jobs: one write per job, so a session
        that saves without pause cannot keep the writer from the others."""
        with self._lock:
            if self._pending is None:
                self._writing = False
                return
            number, copy = self._pending
            self._pending = None
        error: BaseException | None = None
        try:
            self._save(copy)
        except BaseException as exc:  # reported, and retried on the next request
            error = exc
            log.warning("saving thread %s failed: %s", copy.id, exc)
        with self._lock:
            self._finished(number, error)
            again = self._pending is not None
            self._writing = again
        if again:
            self._post()

    def _finished(self, number: int, error: BaseException | None) -> None:
        """Under `_lock`: request `number` was attempted; wakes the flushes it satisfies
        and reports an error, on the loop."""
        self._attempted = max(self._attempted, number)
        if error is None:
            self.writes += 1
        self.last_error = error
        ready = [waiter for upto, waiter in self._waiters if upto <= number]
        if not ready and error is None:
            return
        self._waiters = [(upto, w) for upto, w in self._waiters if upto > number]
        if self._loop is None:
            return
        with contextlib.suppress(RuntimeError):  # a closed loop: no one is left to tell
            self._loop.call_soon_threadsafe(self._settle, ready, error)

    # -- back on the loop --------------------------------------------------------------

    def _settle(self, ready: list[asyncio.Future[None]], error: BaseException | None) -> None:
        if error is not None and self._on_error is not None:
            self._on_error(error)  # before the flush that waited for it returns
        for waiter in ready:
            if not waiter.done():
                with contextlib.suppress(RuntimeError):  # its loop is closed
                    waiter.set_result(None)


def _detached_copy(thread: Thread) -> Thread:
    """Version bump + a copy whose lists the session will not mutate underneath."""
    thread.touch()
    conversation, metadata = thread.conversation, thread.metadata
    return _copy(
        thread,
        conversation=_copy(conversation, messages=list(conversation.messages)),
        git_commits=list(thread.git_commits),
        metadata=_copy(metadata, tags=list(metadata.tags)),
    )


_new_attribute = object.__setattr__


def _copy(model: M, **fields: Any) -> M:
    """`model.model_copy(update=fields)` for fields the model declares, without the
    generic copying on the way (a turn makes four copies of three models each)."""
    copy = type(model).__new__(type(model))
    _new_attribute(copy, "__dict__", {**model.__dict__, **fields})
    extra = model.__pydantic_extra__
    _new_attribute(copy, "__pydantic_extra__", None if extra is None else dict(extra))
    _new_attribute(copy, "__pydantic_fields_set__", model.__pydantic_fields_set__ | fields.keys())
    private = getattr(model, "__pydantic_private__", None)
    if private is not None:
        private = {k: v for k, v in private.items() if v is not PydanticUndefined}
    _new_attribute(copy, "__pydantic_private__", private)
    return copy
