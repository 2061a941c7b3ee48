"""ThreadSaver: coalescing, durability on flush, errors reported and retried."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from loom.core.messages import UserMessage
from loom.core.thread import Thread
from loom.session.runtime.saver import ThreadSaver


class SlowStore:
    def __init__(self, delay: float = 0.02, fail_first: int = 0) -> None:
        self.delay = delay
        self.fail_first = fail_first
        self.saved: list[tuple[int, int]] = []  # (version, message count)
        self.gate = threading.Event()
        self.gate.set()
        self.entered = threading.Event()  # a write has begun

    def save(self, thread: Thread) -> None:
        self.entered.set()
        self.gate.wait(5)
        time.sleep(self.delay)
        if self.fail_first:
            self.fail_first -= 1
            raise OSError(28, "No space left on device")
        self.saved.append((thread.version, len(thread.messages)))


async def test_requests_coalesce_and_flush_lands_the_latest_state() -> None:
    thread = Thread.new()
    store = SlowStore()
    saver = ThreadSaver(lambda: thread, store.save)
    for n in range(20):
        thread.append(UserMessage(content=str(n)))
        saver.request()
        await asyncio.sleep(0)
    await saver.flush()
    assert store.saved[-1][1] == 20
    assert 1 <= saver.writes < 20 and saver.requests == 20
    versions = [v for v, _ in store.saved]
    assert versions == sorted(versions) and thread.version == versions[-1]


async def test_a_copy_is_saved_so_appends_during_a_write_are_safe() -> None:
    thread = Thread.new()
    store = SlowStore()
    store.gate.clear()
    saver = ThreadSaver(lambda: thread, store.save)
    thread.append(UserMessage(content="one"))
    saver.request()
    await asyncio.to_thread(store.entered.wait, 5)  # the write has its copy, waits on the gate
    thread.append(UserMessage(content="two"))
    saver.request()
    store.gate.set()
    await saver.flush()
    assert [count for _, count in store.saved] == [1, 2]


async def test_a_cancelled_flush_leaves_the_write_landing() -> None:
    thread = Thread.new()
    store = SlowStore(delay=0.05)
    saver = ThreadSaver(lambda: thread, store.save)
    thread.append(UserMessage(content="x"))
    saver.request()
    waiting = asyncio.ensure_future(saver.flush())
    await asyncio.sleep(0.01)
    waiting.cancel()  # what loop shutdown does to every task
    await asyncio.gather(waiting, return_exceptions=True)
    await asyncio.wait_for(saver.flush(), 5)
    assert store.saved and store.saved[-1][1] == 1


async def test_saves_run_off_the_loop_in_the_order_requested() -> None:
    thread = Thread.new()
    writers: list[int] = []
    saved: list[int] = []

    def save(copy: Thread) -> None:
        writers.append(threading.get_ident())
        time.sleep(0.001)
        saved.append(copy.version)

    saver = ThreadSaver(lambda: thread, save)
    for n in range(30):
        thread.append(UserMessage(content=str(n)))
        saver.request()
        if n % 3 == 0:
            await asyncio.sleep(0.002)
    await saver.flush()
    assert threading.get_ident() not in writers
    assert saved == sorted(set(saved)) and saved[-1] == thread.version


async def test_a_save_costs_the_loop_no_task_and_no_round_trip(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only a flush that has to wait is woken from the writer thread: a request is a
    copy and a job for the writer, nothing the loop has to run afterwards."""
    loop = asyncio.get_running_loop()
    counts = {"tasks": 0, "wakes": 0}
    create_task, call_soon_threadsafe = loop.create_task, loop.call_soon_threadsafe

    def counting_task(*args: Any, **kwargs: Any) -> Any:
        counts["tasks"] += 1
        return create_task(*args, **kwargs)

    def counting_wake(*args: Any, **kwargs: Any) -> Any:
        counts["wakes"] += 1
        return call_soon_threadsafe(*args, **kwargs)

    monkeypatch.setattr(loop, "create_task", counting_task)
    monkeypatch.setattr(loop, "call_soon_threadsafe", counting_wake)
    thread = Thread.new()
    store = SlowStore(delay=0)
    saver = ThreadSaver(lambda: thread, store.save)
    for n in range(10):
        thread.append(UserMessage(content=str(n)))
        saver.request()
        while saver.writes < n + 1:  # each lands before the next is asked for
            await asyncio.sleep(0.001)
    await saver.flush()  # nothing left to wait for
    assert counts == {"tasks": 0, "wakes": 0}
    store.gate.clear()
    saver.request()
    flushed = asyncio.ensure_future(saver.flush())
    await asyncio.sleep(0.01)
    store.gate.set()
    await flushed
    assert counts == {"tasks": 1, "wakes": 1}  # ensure_future's task, and its wake-up


async def test_errors_are_reported_and_the_next_request_retries() -> None:
    thread = Thread.new()
    store = SlowStore(delay=0, fail_first=1)
    errors = []
    saver = ThreadSaver(lambda: thread, store.save, on_error=errors.append)
    thread.append(UserMessage(content="x"))
    saver.request()
    await saver.flush()
    assert len(errors) == 1 and "No space left" in str(errors[0])
    assert saver.last_error is errors[0] and store.saved == []
    saver.request()
    await saver.flush()
    assert saver.last_error is None and store.saved[-1][1] == 1


async def test_a_session_saving_without_pause_does_not_keep_the_writer_from_another() -> None:
    from loom.session.runtime.save_writer import SaveWriter

    writer = SaveWriter()
    order: list[str] = []
    first_write = threading.Event()
    release = threading.Event()

    def save_busy(thread: Thread) -> None:
        first_write.set()
        release.wait(5)
        order.append(f"busy {len(thread.messages)}")

    busy_thread, quiet_thread = Thread.new(), Thread.new()
    busy = ThreadSaver(lambda: busy_thread, save_busy, executor=writer)
    quiet = ThreadSaver(lambda: quiet_thread, lambda t: order.append("quiet"), executor=writer)
    busy_thread.append(UserMessage(content="1"))
    busy.request()
    await asyncio.to_thread(first_write.wait, 5)  # the busy write is under way
    busy_thread.append(UserMessage(content="2"))
    busy.request()  # waits for the writer, behind...
    quiet.request()  # ...and so does the other session's save
    release.set()
    await asyncio.gather(busy.flush(), quiet.flush())
    # the other session's save is not held back until the busy one stops asking
    assert order == ["busy 1", "quiet", "busy 2"]
    writer.shutdown()
