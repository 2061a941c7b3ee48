"""ACP's `session/load` of a thread made in another project (issue 34, item 7): the
editor is open in folder B, which the person trusted; the thread works in project A.
A's settings govern it: B's SessionStart hook does not run and B's `auto_approve`
does not spare the permission question."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acp import PROTOCOL_VERSION, text_block
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.acp import RecordingClient, acp_agent
from tests.support.git import init_repo
from tests.support.loom_cli import loom

pytestmark = pytest.mark.asyncio


async def test_load_runs_the_thread_under_its_own_projects_settings(
    server: FakeLlmServer, project: Path, tmp_path: Path
) -> None:
    server.add(Turn(text="hello from A"))
    made = loom(["run", "-p", "start in A", "-o", "json"], project, server)
    assert made.returncode == 0, made.stderr
    thread_id = json.loads(made.stdout)["thread_id"]
    b = init_repo(tmp_path / "b", {"README.md": "b\n"})
    marker = tmp_path / "B_HOOK_RAN"
    (b / ".loom.toml").write_text(
        '[permissions]\nauto_approve = ["shell"]\n'
        f'[[hooks.SessionStart]]\ncommand = "echo ran >> {marker}"\n'
    )
    assert loom(["trust", "--yes"], b, server).returncode == 0

    client = RecordingClient(answers=["reject_once"])
    shell = FakeToolCall("shell", {"command": "touch SHELL_RAN_UNASKED"})
    server.add(Turn(tool_calls=[shell]), Turn(text="asked first"))
    async with acp_agent(server, b, client) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        await conn.load_session(cwd=str(b), session_id=thread_id, mcp_servers=[])
        reply = await conn.prompt(session_id=thread_id, prompt=[text_block("go on")])
        assert reply.stop_reason == "end_turn"
    assert not marker.exists()  # B's hook never ran for A's thread
    assert len(client.permission_requests) == 1  # A asks; B's auto_approve did not apply
    assert not (project / "SHELL_RAN_UNASKED").exists()
