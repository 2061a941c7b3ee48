"""Permission prompts, interrupts (Ctrl-C) and tool timeouts through a live session."""

from __future__ import annotations

import asyncio

import pytest

from loom.core.messages import ToolMessage
from loom.core.state import INTERRUPTED_RESULT
from loom.core.thread import AgentStateKind
from loom.llm.scripted import ScriptedProvider, ScriptedTurn, tool_turn
from loom.session import NoPendingPermission
from loom.store.local import LocalThreadStore
from tests.support.sessions import HangTool, NoopTool, WriteTool, make_workspace, only


async def next_event(events, kind: str, timeout: float = 5.0):
    while True:
        event = await events.get(timeout)
        if event.type == kind:
            return event


def write_turn(path: str, call_id: str) -> ScriptedTurn:
    return tool_turn("write_file", {"path": path, "content": "x"}, id=call_id)


async def test_ask_then_allow_once_runs_the_tool(tmp_path) -> None:
    provider = ScriptedProvider([write_turn("a.txt", "c1"), "Written."])
    ws = make_workspace(tmp_path, provider)
    session = await ws.start_session(only(WriteTool()))
    events = session.subscribe()
    turn = asyncio.create_task(session.send_message("write a"))

    request = await next_event(events, "permission_request")
    assert (request.tool_name, request.tool_path, request.call_id) == ("write_file", "a.txt", "c1")
    assert request.reason == "needs your approval"
    assert session.pending_permission is not None
    assert session.pending_permission.id == "c1"
    assert not (tmp_path / "a.txt").exists()
    # the thread is on disk before we wait on a person
    saved = LocalThreadStore().load(session.thread.id)
    assert saved is not None
    assert saved.agent_state.kind is AgentStateKind.EXECUTING_TOOLS
    assert [c.id for c in saved.agent_state.pending_tool_calls] == ["c1"]

    session.respond_to_permission("allow_once")
    assert await turn == "Written."
    assert (tmp_path / "a.txt").read_text() == "x"
    with pytest.raises(NoPendingPermission):
        session.respond_to_permission("allow_once")
    await ws.shutdown()


async def test_deny_answers_the_model_and_leaves_the_file_alone(tmp_path) -> None:
    provider = ScriptedProvider([write_turn("b.txt", "c1"), "Understood."])
    ws = make_workspace(tmp_path, provider)
    session = await ws.start_session(only(WriteTool()))
    events = session.subscribe()
    turn = asyncio.create_task(session.send_message("write b"))
    await next_event(events, "permission_request")
    with pytest.raises(ValueError, match="unknown permission answer"):
        session.respond_to_permission("yes please")
    session.respond_to_permission("deny")
    assert await turn == "Understood."
    assert not (tmp_path / "b.txt").exists()
    result = next(m for m in session.get_history() if isinstance(m, ToolMessage))
    assert result.is_error and "Permission denied" in result.content
    await ws.shutdown()


async def test_allow_always_is_remembered(tmp_path) -> None:
    provider = ScriptedProvider(
        [write_turn("c.txt", "c1"), "one", write_turn("c.txt", "c2"), "two"]
    )
    ws = make_workspace(tmp_path, provider)
    session = await ws.start_session(only(WriteTool()))
    events = session.subscribe()
    turn = asyncio.create_task(session.send_message("first"))
    await next_event(events, "permission_request")
    session.respond_to_permission("allow_always")
    assert await turn == "one"
    assert await session.send_message("second") == "two"  # no prompt this time
    assert not [e for e in events.drain() if e.type == "permission_request"]
    await ws.shutdown()


async def test_auto_approve_session_never_asks(tmp_path) -> None:
    provider = ScriptedProvider([write_turn("d.txt", "c1"), "done"])
    ws = make_workspace(tmp_path, provider)
    session = await ws.start_session(only(WriteTool(), auto_approve=True))
    events = session.subscribe()
    assert await session.send_message("go") == "done"
    assert (tmp_path / "d.txt").exists()
    assert "permission_request" not in [e.type for e in events.drain()]
    await ws.shutdown()


async def test_interrupt_mid_tool_answers_the_call_and_saves(tmp_path) -> None:
    hang = HangTool()
    provider = ScriptedProvider([tool_turn("hang", {}, id="h1"), "after"])
    ws = make_workspace(tmp_path, provider, tool_timeout=None)
    session = await ws.start_session(only(hang))
    turn = asyncio.create_task(session.send_message("hang please"))
    await asyncio.wait_for(hang.started.wait(), 5)
    assert session.get_status() == "executing_tool"

    assert session.interrupt() is True
    assert await turn == ""
    assert hang.cancelled
    assert session.last_turn is not None
    assert session.last_turn.interrupted
    assert session.get_status() == "idle"
    saved = LocalThreadStore().load(session.thread.id)
    assert saved is not None
    assert [m.role for m in saved.messages] == ["user", "assistant", "tool"]
    assert saved.messages[-1].tool_call_id == "h1"
    assert saved.messages[-1].content == INTERRUPTED_RESULT
    assert saved.agent_state.kind is AgentStateKind.WAITING_FOR_USER_INPUT
    assert session.interrupt() is False  # nothing running now
    # the next turn works and the model sees the interrupted result
    assert await session.send_message("go on") == "after"
    assert [m.role for m in provider.requests[-1].messages][-2:] == ["tool", "user"]
    await ws.shutdown()


async def test_interrupt_while_waiting_for_permission(tmp_path) -> None:
    provider = ScriptedProvider([write_turn("e.txt", "c1")])
    ws = make_workspace(tmp_path, provider)
    session = await ws.start_session(only(WriteTool()))
    events = session.subscribe()
    turn = asyncio.create_task(session.send_message("write e"))
    await next_event(events, "permission_request")
    session.interrupt()
    assert await turn == ""
    assert session.pending_permission is None
    last = session.get_history()[-1]
    assert isinstance(last, ToolMessage)
    assert last.tool_call_id == "c1" and last.content == INTERRUPTED_RESULT
    await ws.shutdown()


async def test_interrupt_while_streaming_keeps_the_user_message_and_the_words_shown(
    tmp_path,
) -> None:
    slow = ScriptedTurn(text="a long answer " * 20, chunk_size=4, chunk_delay=0.01)
    provider = ScriptedProvider([slow])
    ws = make_workspace(tmp_path, provider)
    session = await ws.start_session(only())
    events = session.subscribe()
    turn = asyncio.create_task(session.send_message("talk"))
    shown = (await next_event(events, "text_delta")).text
    session.interrupt()
    assert await turn == ""
    user, cut = session.get_history()
    assert user.role == "user" and cut.role == "assistant"
    assert cut.stop_reason == "interrupted" and cut.content.startswith(shown)
    assert ("a long answer " * 20).startswith(cut.content)
    await ws.shutdown()


async def test_cancelling_the_caller_interrupts_cleanly(tmp_path) -> None:
    hang = HangTool()
    ws = make_workspace(
        tmp_path, ScriptedProvider([tool_turn("hang", {}, id="h1")]), tool_timeout=None
    )
    session = await ws.start_session(only(hang))
    turn = asyncio.create_task(session.send_message("x"))
    await asyncio.wait_for(hang.started.wait(), 5)
    turn.cancel()  # e.g. the REPL task hit by Ctrl-C
    await asyncio.gather(turn, return_exceptions=True)
    assert session.get_history()[-1].content == INTERRUPTED_RESULT
    await ws.shutdown()


async def test_a_hung_tool_times_out_into_an_error_result(tmp_path) -> None:
    hang = HangTool()
    provider = ScriptedProvider([tool_turn("hang", {}, id="h1"), "gave up"])
    ws = make_workspace(tmp_path, provider, tool_timeout=0.05)
    session = await ws.start_session(only(hang))
    assert await session.send_message("x") == "gave up"
    result = session.get_history()[2]
    assert isinstance(result, ToolMessage)
    assert result.is_error and "did not finish within 0.05 s" in result.content
    await ws.shutdown()


async def test_interrupt_while_a_message_is_being_read_stops_the_turn(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A long paste is scanned for @mentions before the turn: a Ctrl-C (or SIGTERM) then
    # found no turn to stop, and the model was asked anyway.
    import threading

    from loom.session.runtime import mentions
    from loom.session.runtime import session as session_module

    reading, release = threading.Event(), threading.Event()

    def slow_expand(text, root):
        reading.set()
        release.wait(10)
        return mentions.expand_mentions(text, root)

    monkeypatch.setattr(session_module, "expand_mentions", slow_expand)
    provider = ScriptedProvider(["never asked"])
    ws = make_workspace(tmp_path, provider)
    session = await ws.start_session(only())
    turn = asyncio.create_task(session.send_message("a long paste of @notes and src/"))
    await asyncio.to_thread(reading.wait, 10)
    assert session.interrupt() is True
    release.set()
    assert await turn == ""
    assert provider.requests == []
    await ws.shutdown()


async def test_an_interrupt_stops_a_busy_turn_wherever_it_lands(tmp_path) -> None:
    """A turn whose model and tool answer at once, interrupted 0.5, 1, ... 20 ms in:
    every interrupt ends the turn. (On Python 3.11, one that landed as the repo map's
    worker thread answered was lost to asyncio.wait_for, and the turn ran on to the end
    of its script. The delays only spread where the interrupts land; nothing is timed.)"""
    runway = 400
    for offset in range(1, 41):
        busy = ScriptedProvider([tool_turn("noop", {}, id=f"n{i}") for i in range(runway)])
        ws = make_workspace(tmp_path, busy, max_tool_rounds=runway + 1)
        session = await ws.start_session(only(NoopTool()))
        turn = asyncio.create_task(session.send_message("grind"))
        await asyncio.sleep(offset * 0.0005)
        assert session.interrupt()
        assert await turn == "", f"interrupted {offset * 0.5} ms in"
        assert len(busy.requests) < runway  # stopped, not run out of script
        await ws.shutdown()
