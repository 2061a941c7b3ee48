"""SaveWriter: the one thread that writes a manager's threads, one job after another.

`ThreadSaver` hands it a job per save with `post(job)`: a put on a C queue, which wakes
the thread. (A ThreadPoolExecutor's `submit` builds a Future and a work item and takes
two locks, and its worker then settles the Future: about three times the CPU per save,
on the loop's side too.) It is an Executor as well (`submit`), for work that has to run
in order with the saves.

`post_soon(job, delay)` is for saves in quick succession: when the thread is idle, the
job is held on the loop's clock for `delay` and posted then, or sooner by `release(job)`
(a flush) or at shutdown. A quick turn asks for four saves within a few milliseconds
and flushes at its end; held, they wake the thread once or twice instead of four times
(each wake-up is a futex round and GIL hand-offs: at a quick model's pace most of a
turn's kernel time).
When the thread is busy anyway a job is posted at once: queued behind other sessions'
jobs, it costs no wake-up and keeps its place.

The thread starts with the first job. At interpreter exit the jobs already posted
still run, as a ThreadPoolExecutor's do, and so do the held ones: the thread is a
daemon, and an exit hook posts what is held and waits for the thread to drain its queue.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import queue
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

log = logging.getLogger(__name__)

Job = Callable[[], object]


class SaveWriter(Executor):
    def __init__(self, name: str = "loom-save") -> None:
        self._name = name
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._busy = False  # a job is running (read without the lock: a hint)
        self._held: dict[Job, tuple[asyncio.AbstractEventLoop, asyncio.TimerHandle]] = {}

    def post(self, job: Job) -> None:
        """Run `job` in the writer thread, after every job posted before it. What it
        raises is logged (a save reports its own errors). RuntimeError after shutdown."""
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot post a save after the writer was shut down")
            self._put(job)

    def post_soon(self, job: Job, delay: float) -> None:
        """Post `job` within `delay` seconds (on the running loop's clock); at once when
        the thread is busy. A job already held stays held: the job itself reads what to
        write when it runs, so posting it once is enough."""
        if self._busy or delay <= 0:
            self.post(job)
            return
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot post a save after the writer was shut down")
            if job not in self._held:
                self._held[job] = (loop, loop.call_later(delay, self.release, job))
                _running.add(self)  # the exit hook posts what is held

    def release(self, job: Job) -> None:
        """Post `job` now if it is held; nothing otherwise."""
        with self._lock:
            held = self._held.pop(job, None)
            if held is not None:
                self._put(job)
        if held is not None:
            loop, timer = held
            if asyncio._get_running_loop() is loop:  # the handle is its loop's to cancel
                timer.cancel()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()

        def job() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:
                future.set_exception(exc)
            else:
                future.set_result(result)

        self.post(job)
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """No more jobs; the ones posted or held still run (`wait`: until they have)."""
        with self._lock:
            already, self._closed = self._closed, True
            held, self._held = list(self._held), {}
            for job in held:  # their timers find nothing held and do nothing
                self._put(job)
            thread = self._thread
            if thread is not None and not already:
                self._jobs.put(None)
        if thread is None:
            _running.discard(self)
            return
        if wait and thread is not threading.current_thread():
            thread.join()
        _running.discard(self)

    def _put(self, job: Job) -> None:
        """Under `_lock`: queue `job`, starting the thread with the first."""
        if self._thread is None:
            thread = threading.Thread(target=self._work, name=f"{self._name}_0", daemon=True)
            thread.start()
            self._thread = thread
            _running.add(self)
        self._jobs.put(job)

    def _work(self) -> None:
        jobs = self._jobs
        while True:
            job = jobs.get()
            if job is None:
                return
            self._busy = True
            try:
                job()
            except BaseException:
                log.exception("a job in the save writer failed")
            self._busy = False
            del job  # not kept (with the thread copy it holds) while the writer idles


_running: weakref.WeakSet[SaveWriter] = weakref.WeakSet()


@atexit.register
def _finish_all() -> None:
    """The saves posted before exit land (the daemon threads still run here)."""
    for writer in list(_running):
        writer.shutdown(wait=True)
