"""How the sandbox meets permissions: the prompt says whether a command runs sandboxed,
and where nothing confines shell, every shell command asks (or is refused headless)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from loom.llm.scripted import ScriptedProvider, tool_turn
from loom.permissions import Decision, GrantStore, PermissionPolicy
from loom.sandbox import Detection, Sandbox, backend, build_policy
from loom.session import SessionSpec
from loom.session.assembly.sandboxing import (
    UnconfinedShellPolicy,
    guard_policy,
    needs_approval_for_shell,
)
from loom.session.assembly.toolset import default_registry
from loom.tools.base import ReportsSandbox
from tests.support.sandbox import require_sandbox
from tests.support.sessions import make_workspace
from tests.support.tools import tool_named


async def _permission_request(tmp_path: Path, command: str):
    """The permission request a session started the way every face starts one (its
    sandbox as the machine gives it) shows for a shell `command` under --yes."""
    provider = ScriptedProvider([tool_turn("shell", {"command": command}, id="d"), "ok"])
    ws = make_workspace(tmp_path, provider)
    session = await ws.start_session(SessionSpec(auto_approve=True))
    events = session.subscribe()
    turn = asyncio.create_task(session.send_message("go"))
    while (event := await events.get(10)).type != "permission_request":
        pass
    session.respond_to_permission("deny")
    assert await turn == "ok"
    await ws.shutdown()
    return event


async def test_the_permission_request_says_it_runs_sandboxed(tmp_path: Path) -> None:
    require_sandbox()
    event = await _permission_request(tmp_path, "rm -rf .")
    assert event.sandboxed is True
    assert event.sandbox.startswith("runs sandboxed (bubblewrap)")
    assert "network off" in event.sandbox


async def test_the_permission_request_says_it_runs_unconfined(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a machine where the OS sandbox cannot start (what `detect()` found, once per process)
    monkeypatch.setattr(backend, "_detected", [Detection(None, "no bwrap")])
    event = await _permission_request(tmp_path, "rm -rf .")
    assert event.sandboxed is False and event.sandbox == "runs without a sandbox (no bwrap)"


def test_unconfined_shell_always_asks_and_headless_refuses(tmp_path: Path) -> None:
    tools = default_registry(tmp_path)
    shell, read = tools.get("shell"), tools.get("file_read")
    grants = GrantStore(tmp_path, database=tmp_path / "loom.db")
    policy = PermissionPolicy(grants, auto_approve_all=True)
    assert policy.check(shell, {"command": "ls"}).decision is Decision.ALLOW

    missing = Sandbox(build_policy(tmp_path), Detection(None, "no bwrap"))
    assert needs_approval_for_shell(missing)
    assert needs_approval_for_shell(Sandbox(build_policy(tmp_path, mode="ask")))
    assert not needs_approval_for_shell(Sandbox(build_policy(tmp_path, mode="off")))

    asking = UnconfinedShellPolicy(policy, headless=False)
    verdict = asking.check(shell, {"command": "ls"})
    assert verdict.decision is Decision.ASK and "--yes does not cover it" in verdict.reason
    assert asking.check(read, {"path": "x"}).decision is Decision.ALLOW
    dangerous = asking.check(shell, {"command": "rm -rf ."})
    assert dangerous.decision is Decision.ASK and "dangerous" in dangerous.reason

    headless = UnconfinedShellPolicy(policy, headless=True)
    refused = headless.check(shell, {"command": "ls"})
    assert refused.decision is Decision.DENY and "--no-sandbox" in refused.reason
    assert headless.grants is grants  # the wrapped policy's attributes stay reachable


def test_a_command_asking_for_the_network_always_asks(tmp_path: Path) -> None:
    require_sandbox()
    sandbox = Sandbox(build_policy(tmp_path))
    shell = default_registry(tmp_path, launcher=sandbox).get("shell")
    assert shell is not None
    assert "network" in shell.parameters["properties"]
    policy = PermissionPolicy(GrantStore(tmp_path, database=tmp_path / "db"), auto_approve_all=True)
    guarded = guard_policy(policy, sandbox, headless=False)
    assert guarded.check(shell, {"command": "ls"}).decision is Decision.ALLOW
    asked = guarded.check(shell, {"command": "pip download x", "network": True})
    assert asked.decision is Decision.ASK and "network access" in asked.reason
    refused = guard_policy(policy, sandbox, headless=True).check(
        shell, {"command": "curl x", "network": True}
    )
    assert refused.decision is Decision.DENY and "network = true" in refused.reason
    assert isinstance(shell, ReportsSandbox)
    assert shell.sandbox_status({"command": "x", "network": True})[1].endswith("network on")
    # with the network on for every command there is nothing to ask for
    open_net = Sandbox(build_policy(tmp_path, network=True))
    assert guard_policy(policy, open_net, headless=False) is policy
    assert (
        "network"
        not in tool_named(default_registry(tmp_path, launcher=open_net), "shell").parameters[
            "properties"
        ]
    )
