"""A turn hands the loop back once it has held it for a slice, not after every event
of the machine (each such yield is a loop iteration: ~10 per turn for nothing)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from loom.llm.scripted import ScriptedProvider, ScriptedTurn, tool_turn
from tests.support.sessions import ANY_MODEL, NoopTool, make_workspace, only


async def test_a_quick_turn_does_not_yield_after_every_event(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns = 5
    script = []
    for n in range(turns):
        script += [tool_turn("noop", id=f"c{n}"), ScriptedTurn(text=f"done {n}")]
    ws = make_workspace(tmp_path, ScriptedProvider(script))
    session = await ws.start_session(only(NoopTool(), model=ANY_MODEL, auto_approve=True))
    real_sleep = asyncio.sleep
    zero_sleeps = [0]

    async def counting(delay: float, *args: object) -> object:
        if delay == 0:
            zero_sleeps[0] += 1
        return await real_sleep(delay, *args)

    monkeypatch.setattr(asyncio, "sleep", counting)
    monkeypatch.setattr("loom.llm.loop_share.clock", lambda: 0.0)  # no slice ever spent
    for n in range(turns):
        assert await session.send_message(f"step {n}") == f"done {n}"
    monkeypatch.undo()
    # before: one per machine event (~10 per turn), besides any the provider makes
    assert zero_sleeps[0] <= turns * 2, zero_sleeps[0]
    await ws.shutdown()
