"""Architect mode: the strong model plans, the fast model carries out each step."""

from __future__ import annotations

import asyncio
import json

import pytest

from loom.core.plan import PlanError, parse_plan
from loom.llm.scripted import ScriptedProvider, tool_turn
from loom.session import TurnError
from loom.store.local import LocalThreadStore
from tests.support.sessions import ANY_MODEL, EchoTool, WriteTool, make_workspace, only

ARCHITECT = "anthropic:claude-opus-4-6"
EDITOR = "anthropic:claude-haiku-4-5"

PLAN = {
    "summary": "Add two modules",
    "steps": [
        {"file": "a.py", "action": "create", "description": "create a.py with A = 1"},
        {"file": "b.py", "action": "create", "description": "create b.py with B = 2"},
    ],
}


def fenced(plan: dict) -> str:
    return f"Here is my plan:\n```json\n{json.dumps(plan)}\n```\nGood luck."


def write(path: str, content: str, call_id: str):
    return tool_turn("write_file", {"path": path, "content": content}, id=call_id)


async def test_plan_then_steps_with_file_tools(tmp_path) -> None:
    architect = ScriptedProvider([fenced(PLAN)])
    editor = ScriptedProvider(
        [
            write("a.py", "A = 1\n", "w1"),
            "Created a.py.",
            write("b.py", "B = 2\n", "w2"),
            "Created b.py.",
        ]
    )
    ws = make_workspace(
        tmp_path, providers={ARCHITECT: architect, EDITOR: editor, ANY_MODEL: architect}
    )
    session = await ws.start_session(
        only(WriteTool(), EchoTool(), auto_approve=True, mode="architect")
    )
    events = session.subscribe()

    answer = await session.send_message("add modules a and b")

    assert (tmp_path / "a.py").read_text() == "A = 1\n"
    assert (tmp_path / "b.py").read_text() == "B = 2\n"
    assert "Carried out 2 of 2 steps" in answer and "Created b.py." in answer
    # the architect planned without tools under its own prompt and model
    plan_request = architect.requests[0]
    assert plan_request.model == "claude-opus-4-6" and plan_request.tools == []
    assert '"steps"' in plan_request.system
    # the editor got only the non-executing tools, and the step text
    assert {t.name for t in editor.requests[0].tools} == {"write_file", "echo"}
    assert "step 1 of 2" in editor.requests[0].messages[-1].content
    assert editor.requests[0].model == "claude-haiku-4-5"

    drained = events.drain()
    statuses = [e.status for e in drained if e.type == "session_status"]
    assert statuses[-1] == "idle" and "idle" not in statuses[:-1]  # busy all the way
    seen = [e for e in drained if e.type.startswith("architect")]
    assert seen[0].type == "architect_plan" and seen[0].steps == PLAN["steps"]
    assert [(e.index, e.status) for e in seen[1:]] == [
        (1, "started"),
        (1, "completed"),
        (2, "started"),
        (2, "completed"),
    ]
    assert seen[2].outcome == "Created a.py."

    saved = LocalThreadStore().load(session.thread.id)
    assert saved is not None
    messages = saved.messages
    assert all(getattr(m, "mode", None) == "architect" for m in messages if m.role != "tool")
    planning = messages[1]
    assert planning.role == "assistant" and planning.plan == PLAN
    assert [getattr(m, "architect_step", None) for m in messages if m.role == "user"] == [
        None,
        1,
        2,
    ]
    step_answers = [m for m in messages if getattr(m, "architect_outcome", None)]
    assert [m.architect_outcome for m in step_answers] == [
        {"index": 1, "status": "completed"},
        {"index": 2, "status": "completed"},
    ]
    # back to the session's own model and tools afterwards
    assert session.active_model == ANY_MODEL and session.active_tools is session.tools
    await ws.shutdown()


async def test_bad_json_is_sent_back_with_a_clear_message(tmp_path) -> None:
    architect = ScriptedProvider(["I think we should {edit things", fenced(PLAN)])
    editor = ScriptedProvider(["did a", "did b"])
    ws = make_workspace(
        tmp_path, providers={ARCHITECT: architect, EDITOR: editor, ANY_MODEL: editor}
    )
    session = await ws.start_session(only(mode="architect"))
    answer = await session.send_message("plan it")
    assert "Carried out 2 of 2" in answer
    feedback = architect.requests[1].messages[-1]
    assert feedback.role == "user" and "not valid JSON" in feedback.content
    assert '"steps"' in feedback.content
    assert getattr(session.get_history()[2], "plan_feedback", False) is True
    await ws.shutdown()


async def test_no_usable_plan_is_a_turn_error_and_the_session_goes_on(tmp_path) -> None:
    architect = ScriptedProvider(["nope", '{"steps": []}', "[1, 2]"])
    normal = ScriptedProvider(["normal answer"])
    ws = make_workspace(
        tmp_path, providers={ARCHITECT: architect, EDITOR: normal, ANY_MODEL: normal}
    )
    session = await ws.start_session(only(mode="architect"))
    with pytest.raises(TurnError, match="did not produce a usable plan after 3 attempts"):
        await session.send_message("plan it")
    session.set_mode("normal")
    assert await session.send_message("hi") == "normal answer"
    await ws.shutdown()


async def test_editor_steps_ask_permission_like_normal_mode(tmp_path) -> None:
    one_step = {"steps": [{"file": "c.py", "action": "create", "description": "make c"}]}
    architect = ScriptedProvider([json.dumps(one_step)])
    editor = ScriptedProvider([write("c.py", "C\n", "w1"), "made c"])
    ws = make_workspace(
        tmp_path, providers={ARCHITECT: architect, EDITOR: editor, ANY_MODEL: editor}
    )
    session = await ws.start_session(only(WriteTool(), mode="architect"))
    events = session.subscribe()
    turn = asyncio.create_task(session.send_message("make c"))
    while (await events.get(5)).type != "permission_request":
        pass
    session.respond_to_permission("deny")
    answer = await turn
    assert not (tmp_path / "c.py").exists()
    assert "1. completed: made c" in answer
    await ws.shutdown()


def test_parse_plan_accepts_common_shapes_and_explains_errors() -> None:
    assert len(parse_plan(json.dumps(PLAN["steps"])).steps) == 2
    plan = parse_plan('{"steps": [{"path": "x.py", "description": "d"}]}')
    assert plan.steps[0].file == "x.py" and plan.steps[0].action == "edit"
    with pytest.raises(PlanError, match="action 'explode'"):
        parse_plan('{"steps": [{"file": "x", "action": "explode", "description": "d"}]}')
    with pytest.raises(PlanError, match='needs a "description"'):
        parse_plan('{"steps": [{"file": "x"}]}')
    with pytest.raises(PlanError, match="not valid JSON"):
        parse_plan("no json here")


async def test_interrupting_a_step_stops_the_plan_and_keeps_the_thread_consistent(tmp_path) -> None:
    from loom.core.state import INTERRUPTED_RESULT
    from tests.support.sessions import HangTool

    architect = ScriptedProvider([fenced(PLAN)])
    editor = ScriptedProvider([tool_turn("hang", {}, id="h1")])
    hang = HangTool()
    ws = make_workspace(
        tmp_path,
        providers={ARCHITECT: architect, EDITOR: editor, ANY_MODEL: editor},
        tool_timeout=None,
    )
    session = await ws.start_session(only(hang, mode="architect"))
    events = session.subscribe()
    turn = asyncio.create_task(session.send_message("do it"))
    await asyncio.wait_for(hang.started.wait(), 5)
    session.interrupt()
    answer = await turn
    assert "Carried out 0 of 2 steps" in answer and "1. interrupted" in answer
    steps = [(e.index, e.status) for e in events.drain() if e.type == "architect_step"]
    assert steps == [(1, "started"), (1, "interrupted")]
    saved = LocalThreadStore().load(session.thread.id)
    assert saved is not None
    assert saved.messages[-1].content == INTERRUPTED_RESULT
    assert session.active_model == ANY_MODEL
    await ws.shutdown()
