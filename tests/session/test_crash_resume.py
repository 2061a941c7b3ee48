"""A process killed with SIGKILL in the middle of a turn resumes from its last save."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from loom.core.messages import AssistantMessage, ToolMessage
from loom.core.state import INTERRUPTED_RESULT, unanswered_calls
from loom.llm.scripted import ScriptedProvider
from loom.store.local import LocalThreadStore
from tests.support.sessions import EchoTool, make_workspace, only

ROOT = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    sys.path.insert(0, {root!r})
    from loom.llm.scripted import ScriptedProvider, tool_turn
    from tests.support.sessions import EchoTool, make_workspace, only

    class SlowEcho(EchoTool):
        async def run(self, args, ctx):
            await asyncio.sleep(0.01)
            return await super().run(args, ctx)

    async def main():
        turns = [tool_turn("echo", {{"text": f"t{{n}}"}}, id=f"c{{n}}") for n in range(10_000)]
        ws = make_workspace(Path({project!r}), ScriptedProvider(turns), max_tool_rounds=20_000)
        session = await ws.start_session(only(SlowEcho()))
        def show(event):
            if event.type == "tool_complete":
                print("DONE", session.thread.id, flush=True)
        session.subscribe(show)
        await session.send_message("echo forever")

    asyncio.run(main())
    """
)


def test_sigkill_mid_turn_then_resume(tmp_path, loom_home) -> None:
    project = tmp_path / "project"
    project.mkdir()
    script = CHILD.format(root=str(ROOT), project=str(project))
    env = {**os.environ, "LOOM_HOME": str(loom_home), "PYTHONPATH": str(ROOT / "src")}
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, env=env, text=True, cwd=ROOT
    )
    try:
        thread_id = None
        for _ in range(30):  # let it run a few dozen tool round trips
            assert child.stdout is not None
            line = child.stdout.readline()
            assert line.startswith("DONE"), f"child said {line!r}"
            thread_id = line.split()[1]
        assert thread_id is not None
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()

    store = LocalThreadStore()
    saved = store.load(thread_id)
    assert saved is not None
    assert saved.messages[0].content == "echo forever"
    assert len(saved.messages) >= 3  # saves happened during the turn, not only at its end
    # the file is a clean prefix: at most the last call lacks its result
    assert len(unanswered_calls(saved.messages)) <= 1

    provider = ScriptedProvider(["resumed fine"])
    ws = make_workspace(project, provider)

    async def resume() -> list:
        session = await ws.start_session(only(EchoTool(), thread=thread_id))
        answer = await session.send_message("where were we?")
        assert answer == "resumed fine"
        await ws.shutdown()
        return session.get_history()

    import asyncio

    history = asyncio.run(resume())
    assert unanswered_calls(history) == []
    resumed_disk = store.load(thread_id)
    assert resumed_disk is not None
    assert [m.role for m in resumed_disk.messages] == [m.role for m in history]
    assert resumed_disk.messages[: len(saved.messages)] == saved.messages  # nothing rewritten
    tail = history[len(saved.messages) :]
    if unanswered_calls(saved.messages):
        assert isinstance(tail[0], ToolMessage) and tail[0].content == INTERRUPTED_RESULT
    assert isinstance(history[-1], AssistantMessage) and history[-1].content == "resumed fine"
