"""ThreadSaver: saves a session's thread after every step, without stalling the loop.

`request()` marks the thread dirty and returns at once; a background task writes it
(in a worker thread, so fsync never blocks other sessions). While one write is in
flight, further requests coalesce: the next write carries the latest state. So a step
costs nothing when disk is slower than the agent, and at most the steps taken during
one write are at risk in a crash. `flush()` waits until everything requested so far is
on disk; the session flushes at the end of every turn, before asking a person for
permission, and at shutdown.

Each write first bumps the thread's version (`Thread.touch`) and hands the store a
shallow copy, so the session can keep appending while the copy is serialised.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import Executor

from loom.core.thread import Thread

log = logging.getLogger(__name__)

SaveFunction = Callable[[Thread], None]


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
        self._dirty = False
        self._task: asyncio.Task[None] | None = None
        self._done = asyncio.Event()
        self._done.set()
        self.writes = 0
        self.requests = 0
        self.last_error: BaseException | None = None

    def request(self) -> None:
        self.requests += 1
        self._dirty = True
        self._done.clear()
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def flush(self) -> None:
        """Wait until every requested save has been attempted. Errors were reported
        through `on_error`; `last_error` holds the latest (None after a good write).
        Survives the writer task being cancelled (e.g. at loop shutdown): it restarts it."""
        while not self._done.is_set():
            if self._task is None or self._task.done():
                if not self._dirty:
                    self._done.set()
                    break
                self._task = asyncio.get_running_loop().create_task(self._run())
            waiter = asyncio.ensure_future(self._done.wait())
            try:
                await asyncio.wait({waiter, self._task}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()

    async def close(self) -> None:
        await self.flush()

    def cancel(self) -> None:
        """Stop writing (a restart reloads from disk). Pending changes are dropped."""
        if self._task is not None:
            self._task.cancel()
        self._dirty = False
        self._done.set()

    async def _run(self) -> None:
        try:
            while self._dirty:
                self._dirty = False
                copy = _detached_copy(self._thread())
                try:
                    loop = asyncio.get_running_loop()
                    await loop.run_in_executor(self._executor, self._save, copy)
                    self.writes += 1
                    self.last_error = None
                except asyncio.CancelledError:
                    self._dirty = True  # the write may not have landed: do it again
                    raise
                except Exception as exc:  # reported, and retried on the next request
                    self.last_error = exc
                    log.warning("saving thread %s failed: %s", copy.id, exc)
                    if self._on_error is not None:
                        self._on_error(exc)
        finally:
            if not self._dirty:
                self._done.set()


def _detached_copy(thread: Thread) -> Thread:
    """Version bump + a copy whose lists the session will not mutate underneath."""
    thread.touch()
    return thread.model_copy(
        update={
            "conversation": thread.conversation.model_copy(
                update={"messages": list(thread.conversation.messages)}
            ),
            "git_commits": list(thread.git_commits),
            "metadata": thread.metadata.model_copy(update={"tags": list(thread.metadata.tags)}),
        }
    )
