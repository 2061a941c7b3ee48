"""A turn's saves wake the writer thread once, and no held save is ever lost.

The writer holds a save job for up to `GATHER_SECONDS` when it is idle, so the four
saves of a quick turn become one write at the end-of-turn flush. These tests pin what
must not change with that: a flush writes at once, a held job is written when its time
is up, when the writer shuts down, and when the process exits without a flush.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from loom.core.messages import UserMessage
from loom.core.thread import Thread
from loom.llm.scripted import ScriptedProvider, tool_turn
from loom.session.runtime import saver as saver_module
from loom.session.runtime.save_writer import SaveWriter
from loom.session.runtime.saver import ThreadSaver
from tests.support.sessions import EchoTool, make_workspace, only

ROOT = Path(__file__).resolve().parents[2]


class CountingStore:
    def __init__(self) -> None:
        self.saved: list[int] = []  # message counts, one per write
        self.threads: set[int] = set()

    def save(self, thread: Thread) -> None:
        self.threads.add(threading.get_ident())
        self.saved.append(len(thread.messages))


def _saver(store: CountingStore, writer: SaveWriter) -> tuple[Thread, ThreadSaver]:
    thread = Thread.new()
    return thread, ThreadSaver(lambda: thread, store.save, executor=writer)


async def _saved_once(thread: Thread, saver: ThreadSaver) -> None:
    """A first save, written: with `long_gather` every later request is "quick" (it
    follows the previous one within the window), so the writer holds it."""
    thread.append(UserMessage(content="first"))
    saver.request()
    await asyncio.wait_for(saver.flush(), 5)


async def _until_written(store: CountingStore, writes: int = 1) -> None:
    for _ in range(500):
        if len(store.saved) >= writes:
            return
        await asyncio.sleep(0.01)


@pytest.fixture
def long_gather(monkeypatch: pytest.MonkeyPatch) -> None:
    """A window no test outlasts: only a flush, a shutdown or the exit hook posts."""
    monkeypatch.setattr(saver_module, "GATHER_SECONDS", 600.0)


async def test_the_first_save_after_a_pause_goes_out_at_once(long_gather) -> None:
    """A person's message, a model's answer after seconds: written without waiting."""
    writer, store = SaveWriter(), CountingStore()
    thread, saver = _saver(store, writer)
    thread.append(UserMessage(content="x"))
    saver.request()
    await _until_written(store)  # no flush, and the window is 600 s
    assert store.saved == [1]
    writer.shutdown()


async def test_saves_in_quick_succession_are_one_write_and_a_flush_posts_it(
    long_gather,
) -> None:
    writer, store = SaveWriter(), CountingStore()
    thread, saver = _saver(store, writer)
    thread.append(UserMessage(content="first"))
    saver.request()
    await asyncio.wait_for(saver.flush(), 5)
    for n in range(4):  # the steps of a quick turn
        thread.append(UserMessage(content=str(n)))
        saver.request()
        await asyncio.sleep(0.001)
    assert store.saved == [1]  # held, waiting for more
    await asyncio.wait_for(saver.flush(), 5)  # not 600 s: the flush posts it
    assert store.saved == [1, 5] and saver.writes == 2 and saver.requests == 5
    assert threading.get_ident() not in store.threads
    writer.shutdown()


async def test_a_held_job_is_posted_when_its_time_is_up() -> None:
    writer = SaveWriter()
    ran = threading.Event()
    writer.post_soon(ran.set, 0.02)
    assert not ran.is_set()
    for _ in range(500):  # nobody releases it
        if ran.is_set():
            break
        await asyncio.sleep(0.01)
    assert ran.is_set()
    writer.shutdown()


async def test_shutting_the_writer_down_writes_what_it_holds(long_gather) -> None:
    writer, store = SaveWriter(), CountingStore()
    savers = [_saver(store, writer) for _ in range(3)]
    for thread, saver in savers:
        await _saved_once(thread, saver)
    for thread, saver in savers:
        thread.append(UserMessage(content="x"))
        saver.request()
    assert store.saved == [1, 1, 1]  # the second saves are held
    writer.shutdown(wait=True)  # what Workspace.shutdown ends with
    assert store.saved == [1, 1, 1, 2, 2, 2]
    with pytest.raises(RuntimeError):
        writer.post(lambda: None)


async def test_a_request_while_the_writer_is_busy_is_queued_at_once(long_gather) -> None:
    """Queued behind a running job it costs no wake-up, and it keeps its place."""
    writer, store = SaveWriter(), CountingStore()
    thread, saver = _saver(store, writer)
    await _saved_once(thread, saver)
    running, go_on = threading.Event(), threading.Event()
    writer.post(lambda: (running.set(), go_on.wait(5)))
    await asyncio.to_thread(running.wait, 5)
    thread.append(UserMessage(content="x"))
    saver.request()
    go_on.set()
    await _until_written(store, 2)  # no flush, and the window is 600 s
    assert store.saved == [1, 2]
    writer.shutdown()


async def test_cancel_drops_a_held_save_and_the_next_saver_writes(long_gather) -> None:
    writer, store = SaveWriter(), CountingStore()
    thread, saver = _saver(store, writer)
    await _saved_once(thread, saver)
    thread.append(UserMessage(content="x"))
    saver.request()  # held
    saver.cancel()  # a restart: it reloads from disk
    await asyncio.wait_for(saver.flush(), 5)  # nothing to wait for
    again = ThreadSaver(lambda: thread, store.save, executor=writer)
    thread.append(UserMessage(content="y"))
    again.request()
    await asyncio.wait_for(again.flush(), 5)
    writer.shutdown()  # runs the cancelled saver's held job too: it finds nothing to write
    assert store.saved == [1, 3]


async def test_a_quick_turn_with_a_tool_call_is_written_once(tmp_path, long_gather) -> None:
    """A turn that follows the last save closely: four save requests (the person's
    message, the call, its result, the answer), one write at the end-of-turn flush."""
    project = tmp_path / "p"
    project.mkdir()
    provider = ScriptedProvider(["hello", tool_turn("echo", {"text": "hi"}), "done"])
    ws = make_workspace(project, provider)
    session = await ws.start_session(only(EchoTool()))
    assert await session.send_message("start") == "hello"
    saver = session._saver
    requests, writes = saver.requests, saver.writes
    assert await session.send_message("go") == "done"
    assert saver.requests - requests >= 4 and saver.writes - writes == 1
    on_disk = ws.store.load(session.thread.id)
    assert on_disk is not None and len(on_disk.messages) == len(session.thread.messages)
    await ws.shutdown()


CHILD = textwrap.dedent(
    """
    import asyncio, json, sys
    sys.path.insert(0, {root!r})
    from loom.core.messages import UserMessage
    from loom.core.thread import Thread
    from loom.session.runtime import saver as saver_module
    from loom.session.runtime.saver import ThreadSaver

    saver_module.GATHER_SECONDS = 600.0
    out = open({out!r}, "a")

    def save(thread):
        out.write(json.dumps(len(thread.messages)) + "\\n")
        out.flush()

    async def main():
        thread = Thread.new()
        saver = ThreadSaver(lambda: thread, save)  # the process-wide writer
        thread.append(UserMessage(content="first"))
        saver.request()
        await saver.flush()  # later requests follow it closely: held
        for n in range(3):
            thread.append(UserMessage(content=str(n)))
            saver.request()
        {ending}

    asyncio.run(main())
    """
)


@pytest.mark.parametrize(
    "ending",
    ["return", "raise SystemExit(3)", "raise KeyboardInterrupt"],
    ids=["loop-ends", "sys-exit", "ctrl-c"],
)
def test_the_process_exiting_without_a_flush_writes_what_is_held(
    tmp_path: Path, ending: str
) -> None:
    out = tmp_path / "saved.jsonl"
    script = CHILD.format(root=str(ROOT / "src"), out=str(out), ending=ending)
    subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60, cwd=ROOT)
    lines = out.read_text().splitlines() if out.exists() else []
    assert [json.loads(line) for line in lines] == [1, 4]
