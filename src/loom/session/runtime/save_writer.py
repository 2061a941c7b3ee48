"""SaveWriter: the one thread that writes a manager's threads, one job after another.

`ThreadSaver` hands it a job per save with `post(job)`: a put on a C queue, which wakes
the thread. (A ThreadPoolExecutor's `submit` builds a Future and a work item and takes
two locks, and its worker then settles the Future: about three times the CPU per save,
on the loop's side too.) It is an Executor as well (`submit`), for work that has to run
in order with the saves.

The thread starts with the first job. At interpreter exit the jobs already posted
still run, as a ThreadPoolExecutor's do: the thread is a daemon, and an exit hook waits
for it after it has drained its queue.
"""

from __future__ import annotations

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

    def post(self, job: Job) -> None:
        """Run `job` in the writer thread, after every job posted before it. What it
        raises is logged (a save reports its own errors). RuntimeError after shutdown."""
        if self._thread is None or self._closed:
            self._start()
        self._jobs.put(job)

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
        """No more jobs; the ones posted still run (`wait`: until they have)."""
        with self._lock:
            already, self._closed = self._closed, True
            thread = self._thread
        if thread is None:
            return
        if not already:
            self._jobs.put(None)
        if wait and thread is not threading.current_thread():
            thread.join()
        _running.discard(self)

    def _start(self) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot post a save after the writer was shut down")
            if self._thread is None:
                thread = threading.Thread(target=self._work, name=f"{self._name}_0", daemon=True)
                thread.start()
                self._thread = thread
                _running.add(self)

    def _work(self) -> None:
        jobs = self._jobs
        while True:
            job = jobs.get()
            if job is None:
                return
            try:
                job()
            except BaseException:
                log.exception("a job in the save writer failed")
            del job  # not kept (with the thread copy it holds) while the writer idles


_running: weakref.WeakSet[SaveWriter] = weakref.WeakSet()


@atexit.register
def _finish_all() -> None:
    """The saves posted before exit land (the daemon threads still run here)."""
    for writer in list(_running):
        writer.shutdown(wait=True)
