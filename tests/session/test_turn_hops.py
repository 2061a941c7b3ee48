"""What a turn costs the event loop besides its own work, counted: tasks, jobs for the
writer thread and wake-ups from it. Saving after every step used to cost a task, a
thread pool job and a trip back through the loop per save (three or four a turn)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from loom.core.thread import Thread
from loom.llm.scripted import ScriptedProvider, ScriptedTurn, tool_turn
from loom.session.runtime.save_writer import SaveWriter
from tests.support.sessions import ANY_MODEL, NoopTool, make_workspace, only


class RecordingStore:
    """Keeps nothing but what was saved when, and on which thread."""

    def __init__(self) -> None:
        self.saved: list[tuple[int, int]] = []  # (version, message count)
        self.threads: set[int] = set()

    def save(self, thread: Thread) -> None:
        self.threads.add(threading.get_ident())
        self.saved.append((thread.version, len(thread.messages)))

    def load(self, thread_id: str) -> None:
        return None

    def acquire_writer(self, thread_id: str) -> RecordingStore:
        return self

    def release(self) -> None:
        pass


async def test_a_turn_saves_every_step_without_a_task_or_a_round_trip_per_save(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns = 6
    script = []
    for n in range(turns):
        script += [tool_turn("noop", id=f"c{n}"), ScriptedTurn(text=f"done {n}")]
    store = RecordingStore()
    ws = make_workspace(tmp_path, ScriptedProvider(script), store=store)
    session = await ws.start_session(only(NoopTool(), model=ANY_MODEL, auto_approve=True))
    loop = asyncio.get_running_loop()
    counts = {"tasks": 0, "jobs": 0, "wakes": 0}

    def counted(name: str, real: Any, of: str = "") -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            if of in getattr(args[0], "__qualname__", ""):
                counts[name] += 1
            return real(*args, **kwargs)

        return call

    # (the checkpoints' snapshots run in worker threads: their to_thread tasks are theirs)
    real_task = loop.create_task
    monkeypatch.setattr(
        loop,
        "create_task",
        lambda coro, **kw: (
            real_task(coro, **kw)
            if coro.__qualname__ == "to_thread"
            else counted("tasks", real_task)(coro, **kw)
        ),
    )
    wake = counted("wakes", loop.call_soon_threadsafe, of="ThreadSaver")
    monkeypatch.setattr(loop, "call_soon_threadsafe", wake)
    monkeypatch.setattr(SaveWriter, "post", counted("jobs", SaveWriter.post))
    for n in range(turns):
        assert await session.send_message(f"step {n}") == f"done {n}"
        assert store.saved[-1][1] == 4 * (n + 1)  # the turn's end is on disk
    monkeypatch.undo()
    # the turn's own task; a job per save at most (four steps); a wake-up from the
    # writer only for the flush at the end of the turn, when the last write is under way
    assert counts["tasks"] == turns, counts
    assert counts["jobs"] <= 4 * turns, counts
    assert counts["wakes"] <= turns, counts
    assert threading.get_ident() not in store.threads
    versions = [version for version, _ in store.saved]
    assert versions == sorted(set(versions))  # each state once, in the order asked
    await ws.shutdown()
