"""Sub-agents through the Workspace (the one assembly path), in process with scripted
models: a child's permission questions reach the person through its parent, cancelling
the parent cancels the child, a crashing child is an error result, and live children are
listed under their parent."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from loom.config import load_config
from loom.llm.base import LlmRequest
from loom.llm.scripted import ScriptedProvider, ScriptedTurn, tool_turn
from loom.session import SessionSpec, Workspace
from tests.support.config_files import quiet_project

Entry = ScriptedTurn | str


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return quiet_project(tmp_path)


class Family:
    """One scripted model for a whole family: a child is answered from the script of the
    brief its first message holds, the parent from the main script."""

    def __init__(self, main: list[Entry], children: dict[str, list[Entry]]) -> None:
        self.main, self.children = list(main), {k: list(v) for k, v in children.items()}

    def __call__(self, request: LlmRequest) -> Entry:
        first = request.messages[0].content if request.messages else ""
        for brief, script in self.children.items():
            if brief in first:
                return script.pop(0)
        return self.main.pop(0)

    def provider(self) -> ScriptedProvider:
        return ScriptedProvider([self] * 50)


def task(prompt: str, description: str = "help") -> ScriptedTurn:
    return tool_turn("task", {"description": description, "prompt": prompt})


def workspace(project: Path, family: Family) -> Workspace:
    provider = family.provider()
    return Workspace(load_config(project), provider_factory=lambda model: provider)


def events_of(session: Any) -> tuple[list[Any], Callable[[str], asyncio.Event]]:
    seen: list[Any] = []
    waits: dict[str, asyncio.Event] = {}

    def on_event(event: Any) -> None:
        seen.append(event)
        kind = event.type if event.type != "subagent_status" else f"subagent_{event.status}"
        waits.setdefault(kind, asyncio.Event()).set()

    session.subscribe(on_event)
    return seen, lambda kind: waits.setdefault(kind, asyncio.Event())


async def test_a_childs_question_is_asked_and_answered_through_its_parent(
    project: Path,
) -> None:
    write = tool_turn("file_write", {"path": "a.txt", "content": "from the child\n"})
    family = Family([task("Write a.txt", "write it"), "parent done"],
                    {"Write a.txt": [write, "child done"]})  # fmt: skip
    ws = workspace(project, family)
    try:
        parent = await ws.start_session(SessionSpec(cwd=project))
        seen, wait = events_of(parent)
        turn = asyncio.create_task(parent.send_message("go"))
        await asyncio.wait_for(wait("permission_request").wait(), 30)
        asked = next(e for e in seen if e.type == "permission_request")
        assert asked.session_id == parent.id and asked.tool_name == "file_write"
        assert asked.reason.startswith("sub-agent general (write it) asks:")
        assert parent.pending_permission is not None
        (child,) = [a for a in ws.list_active() if a.parent_id == parent.id]
        assert child.title == "write it"
        with pytest.raises(LookupError, match="asks through its parent"):
            ws.find_session(child.id).respond_to_permission("allow_once")  # type: ignore[union-attr]
        parent.respond_to_permission("allow_once")
        assert await asyncio.wait_for(turn, 30) == "parent done"
        assert (project / "a.txt").read_text() == "from the child\n"
        assert [a.id for a in ws.list_active()] == [parent.id]  # the child is stopped
    finally:
        await ws.shutdown()


async def test_cancelling_the_parent_cancels_the_child(project: Path) -> None:
    family = Family([task("Think for a long time")],
                    {"Think for a long time": [ScriptedTurn(text="never", delay=60)]})  # fmt: skip
    ws = workspace(project, family)
    try:
        parent = await ws.start_session(SessionSpec(cwd=project))
        seen, wait = events_of(parent)
        turn = asyncio.create_task(parent.send_message("go"))
        await asyncio.wait_for(wait("subagent_message").wait(), 30)  # its brief is in
        child_id = next(e for e in seen if e.type == "subagent_status").child_thread_id
        assert parent.interrupt()
        assert await asyncio.wait_for(turn, 30) == ""
        await asyncio.wait_for(wait("subagent_cancelled").wait(), 30)
        assert [a.id for a in ws.list_active()] == [parent.id]
        child = json.loads(ws.paths.threads_dir.joinpath(f"{child_id}.json").read_text())
        assert child["parent_thread_id"] == parent.thread.id
        assert child["conversation"]["messages"][0]["content"] == "Think for a long time"
        assert child["agent_state"]["kind"] == "WaitingForUserInput"  # saved, resumable
    finally:
        await ws.shutdown()


async def test_a_crashing_or_unstartable_child_is_an_error_result(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agents = project / ".loom" / "agents"
    agents.mkdir(parents=True)
    (agents / "nowhere.md").write_text(
        "---\nname: nowhere\ndescription: d\nmodel: nosuch:model\n---\nbody\n"
    )
    nowhere = tool_turn("task", {"description": "x", "prompt": "p", "agent": "nowhere"})
    family = Family([task("Crash please"), nowhere, "parent fine"], {"Crash please": ["x"]})
    from loom.session.runtime.session import Session

    real = Session.send_message

    async def crash_children(self: Session, text: str) -> str:
        if self.thread.parent_thread_id:
            raise RuntimeError("boom")
        return await real(self, text)

    monkeypatch.setattr(Session, "send_message", crash_children)
    ws = workspace(project, family)
    try:
        parent = await ws.start_session(SessionSpec(cwd=project, auto_approve=True))
        assert await parent.send_message("go") == "parent fine"
        crashed, unstarted = [m.content for m in parent.get_history() if m.role == "tool"]
        assert crashed.startswith("The sub-agent crashed (RuntimeError: boom)")
        assert unstarted.startswith("The sub-agent could not start:")
        assert "nosuch" in unstarted
    finally:
        await ws.shutdown()


async def test_shutting_down_while_a_child_works_stops_both(project: Path) -> None:
    family = Family([task("Work slowly")],
                    {"Work slowly": [ScriptedTurn(text="never", delay=60)]})  # fmt: skip
    ws = workspace(project, family)
    parent = await ws.start_session(SessionSpec(cwd=project))
    seen, wait = events_of(parent)
    turn = asyncio.create_task(parent.send_message("go"))
    await asyncio.wait_for(wait("subagent_message").wait(), 30)
    assert len(ws.list_active()) == 2
    await asyncio.wait_for(ws.shutdown(), 30)  # the face closes mid-task: no error
    assert ws.list_active() == [] and await asyncio.wait_for(turn, 30) == ""
    child_id = next(e for e in seen if e.type == "subagent_status").child_thread_id
    assert ws.paths.threads_dir.joinpath(f"{child_id}.json").exists()
