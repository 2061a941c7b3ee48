"""A session is whole when built: the Workspace builds its collaborators (decision graph,
image store, sub-agent runner, a child's gate, MCP's first-turn wait) before the Session
exists and passes them in; nothing in `src` assigns into a session or its options after."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

import loom
from loom.decisions.recorder import DecisionRecorder
from loom.llm.scripted import ScriptedProvider
from loom.session.runtime.options import SessionOptions
from loom.session.runtime.permission_gate import ParentGate, PermissionGate
from loom.session.workspace.spec import ParentLink
from loom.session.workspace.subagents import SubagentRunner
from loom.store.images import ImageStore
from loom.tools.services import ToolServices
from tests.support.config_files import quiet_project
from tests.support.sessions import EchoTool, make_workspace, only

SRC = Path(loom.__file__).parent
# what only the Session itself sets on itself (`self.gate = ...`), never its builders
SESSION_PARTS = {"gate", "options", "before_turn", "hooks"}


def test_session_options_are_frozen() -> None:
    options = SessionOptions()
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.effort = "high"  # type: ignore[misc]
    assert isinstance(options.tool_services, ToolServices)
    assert options.tool_services.decisions is None  # each collaborator optional


def _assignments_into_sessions(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            if not isinstance(target, ast.Attribute):
                continue
            into_options = isinstance(target.value, ast.Attribute) and (
                target.value.attr == "options"
            )
            owner_is_self = isinstance(target.value, ast.Name) and target.value.id == "self"
            if into_options or (target.attr in SESSION_PARTS and not owner_is_self):
                found.append(f"{path.relative_to(SRC)}:{target.lineno} {ast.unparse(target)}")
    return found


def test_nothing_in_src_assigns_into_a_session_or_its_options() -> None:
    found = [hit for path in sorted(SRC.rglob("*.py")) for hit in _assignments_into_sessions(path)]
    assert found == []


async def test_a_session_starts_with_every_collaborator(tmp_path: Path) -> None:
    project = quiet_project(tmp_path)
    ws = make_workspace(project, ScriptedProvider(["hello"] * 5))
    session = await ws.start_session(only(EchoTool()))
    options = session.options
    services = options.tool_services
    assert isinstance(services.decisions, DecisionRecorder)
    assert services.decisions.thread is session.thread  # this session's graph
    assert isinstance(services.subagents, SubagentRunner)
    assert services.subagents.parent is session and services.subagents.depth == 0
    assert isinstance(options.image_store, ImageStore)
    assert options.decision_context is not None and isinstance(options.decision_context(256), str)
    assert len(options.post_tools_hooks) == 1  # the decision graph's (no [hooks] post_tools)
    assert isinstance(session.gate, PermissionGate)

    child = await ws.start_session(
        only(EchoTool(), parent=ParentLink(session, "call-1", "general", 1), title="look")
    )
    assert isinstance(child.gate, ParentGate) and child.gate.parent is session.gate
    assert child.gate.label == "sub-agent general (look)"
    assert child.before_turn == ()  # a child never starts MCP servers of its own
    runner = child.options.tool_services.subagents
    assert isinstance(runner, SubagentRunner) and runner.depth == 1 and runner.parent is child
    assert await child.send_message("hi") == "hello"
    # a grandchild ([agents] max_depth 2) asks where the person's session asks, as itself
    grandchild = await ws.start_session(
        only(EchoTool(), parent=ParentLink(child, "call-2", "explore", 2), title="deeper")
    )
    assert isinstance(grandchild.gate, ParentGate) and grandchild.gate.parent is session.gate
    assert grandchild.gate.label == "sub-agent explore (deeper)"
    await ws.shutdown()
