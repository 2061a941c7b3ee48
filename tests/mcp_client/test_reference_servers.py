"""Loom as a client of the reference MCP servers (npm): `loom run` against the fake LLM
calls their tools, and the results reach the model and the thread."""

from __future__ import annotations

import json
import os
from pathlib import Path

import psutil

from loom.paths import LoomPaths
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.fakes.npm_tools import npm_bin
from tests.support.loom_cli import loom_in_process
from tests.support.mcp import call


def _thread(thread_id: str) -> dict:
    path = Path(os.environ["LOOM_HOME"]) / "data" / "threads" / f"{thread_id}.json"
    return json.loads(path.read_text())


def _tool_results(request) -> list[str]:
    return [
        json.dumps(block)
        for message in request.json["messages"]
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def test_run_calls_server_everything_and_the_result_reaches_model_and_thread(
    server: FakeLlmServer,
    project: Path,
) -> None:
    everything = npm_bin("mcp-server-everything")
    added = loom_in_process(["mcp", "add", "everything", "--", str(everything)], project, server)
    assert added.returncode == 0, added.stderr
    (project / ".loom.toml").write_text('[permissions]\nauto_approve = ["mcp__everything__*"]\n')
    server.add(Turn(tool_calls=[FakeToolCall("mcp__everything__echo", {"message": "hi mcp"})]))
    server.add(Turn(text="the server said hi"))
    done = loom_in_process(
        ["run", "-p", "echo something", "-o", "json", "--trust"], project, server
    )
    assert done.returncode == 0, done.stderr
    first, second = server.requests
    offered = {tool["name"]: tool for tool in first.json["tools"]}
    echo = offered["mcp__everything__echo"]
    assert "message" in echo["input_schema"]["properties"]  # the server's own schema
    assert any("Echo: hi mcp" in result for result in _tool_results(second))
    thread = _thread(json.loads(done.stdout)["thread_id"])
    tool_messages = [m for m in thread["conversation"]["messages"] if m["role"] == "tool"]
    assert tool_messages[0]["tool_name"] == "mcp__everything__echo"
    assert tool_messages[0]["content"] == "Echo: hi mcp"


def test_project_mcp_json_needs_approval_then_filesystem_server_reads(
    server: FakeLlmServer,
    project: Path,
) -> None:
    filesystem = npm_bin("mcp-server-filesystem")
    (project / "notes.txt").write_text("project notes\n")
    (project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"fs": {"command": str(filesystem), "args": [str(project)]}}})
    )
    user_config = LoomPaths.from_env().user_config_file  # the person allows the fs tools
    user_config.parent.mkdir(parents=True, exist_ok=True)
    user_config.write_text('[permissions]\nauto_approve = ["mcp__fs__*"]\n')
    server.add(Turn(text="no tools yet"))
    before = loom_in_process(["run", "-p", "hi"], project, server)
    assert before.returncode == 0, before.stderr
    assert "MCP server 'fs' not started" in before.stderr
    assert "loom mcp approve fs" in before.stderr
    assert not [
        t for t in server.requests[0].json.get("tools", []) if t["name"].startswith("mcp__")
    ]

    approved = loom_in_process(["mcp", "approve", "fs", "--yes"], project, server)
    assert approved.returncode == 0 and "Approved" in approved.stdout, approved.stderr
    assert f"runs: {filesystem} {project}" in approved.stdout  # what was approved, in full
    read = FakeToolCall("mcp__fs__read_text_file", {"path": str(project / "notes.txt")})
    server.add(Turn(tool_calls=[read]), Turn(text="read it"))
    # approved, not trusted
    after = loom_in_process(["run", "-p", "read the notes"], project, server)
    assert after.returncode == 0, after.stderr
    assert "not started" not in after.stderr
    assert any("project notes" in result for result in _tool_results(server.requests[2]))


def test_mcp_tools_ask_by_default(
    server: FakeLlmServer,
    project: Path,
) -> None:
    everything = npm_bin("mcp-server-everything")
    loom_in_process(["mcp", "add", "everything", "--", str(everything)], project, server)
    server.add(Turn(tool_calls=[FakeToolCall("mcp__everything__echo", {"message": "x"})]))
    server.add(Turn(text="refused"))
    done = loom_in_process(["run", "-p", "echo"], project, server)
    assert done.returncode == 0, done.stderr
    assert "refused mcp__everything__echo" in done.stderr


def test_deny_rule_wins_over_auto_approve(
    server: FakeLlmServer,
    project: Path,
) -> None:
    everything = npm_bin("mcp-server-everything")
    loom_in_process(["mcp", "add", "everything", "--", str(everything)], project, server)
    (project / ".loom.toml").write_text(
        '[permissions]\nauto_approve = ["mcp__everything__*"]\ndeny = ["mcp__everything__echo"]\n'
    )
    server.add(Turn(tool_calls=[FakeToolCall("mcp__everything__echo", {"message": "x"})]))
    server.add(Turn(text="refused"))
    done = loom_in_process(["run", "-p", "echo", "--yes"], project, server)
    assert done.returncode == 0, done.stderr
    assert "refused mcp__everything__echo" in done.stderr and "denied by rule" in done.stderr


async def test_killed_reference_server_restarts_and_slow_call_times_out(
    open_hub, tmp_path: Path
) -> None:
    everything = str(npm_bin("mcp-server-everything"))
    hub, registry, notices = await open_hub({"ev": {"command": everything, "timeout": 1.0}})
    assert notices == []
    assert (await call(registry, "mcp__ev__echo", {"message": "a"}, tmp_path)).content == "Echo: a"
    for child in psutil.Process().children(recursive=True):
        if "server-everything" in " ".join(child.cmdline()):
            child.kill()
    for _ in range(200):
        if hub.connections["ev"].state == "exited":
            break
        await __import__("asyncio").sleep(0.05)
    again = await call(registry, "mcp__ev__echo", {"message": "b"}, tmp_path)
    assert again.content == "Echo: b" and hub.connections["ev"].restarts == 1
    slow = await call(
        registry, "mcp__ev__trigger-long-running-operation", {"duration": 30, "steps": 3}, tmp_path
    )
    assert slow.is_error and "did not answer within 1 s" in slow.content
    after = await call(registry, "mcp__ev__echo", {"message": "c"}, tmp_path)
    assert after.content == "Echo: c"


async def test_servers_get_the_environment_without_secrets(
    open_hub, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-not-for-servers-123456")
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-not-for-servers-123456")
    monkeypatch.setenv("PLAIN_SETTING", "visible")
    monkeypatch.setenv("GH_TOKEN", "gh-for-this-server-123456")
    everything = str(npm_bin("mcp-server-everything"))
    entry = {"command": everything, "env": {"GITHUB_TOKEN": "${GH_TOKEN}"}}
    _, registry, _ = await open_hub({"ev": entry})
    result = await call(registry, "mcp__ev__get-env", {}, tmp_path)
    env = json.loads(result.content)
    assert env["PLAIN_SETTING"] == "visible" and "PATH" in env
    assert env["GITHUB_TOKEN"] == "gh-for-this-server-123456"  # named in its `env`
    assert "ANTHROPIC_API_KEY" not in env and "SOME_SERVICE_TOKEN" not in env


async def test_server_progress_becomes_tool_progress(open_hub, tmp_path: Path) -> None:
    from loom.tools.base import ToolContext

    everything = str(npm_bin("mcp-server-everything"))
    _, registry, _ = await open_hub({"ev": {"command": everything}})
    reports: list[tuple[float | None, str]] = []
    ctx = ToolContext(project_root=tmp_path, progress=lambda f, m: reports.append((f, m)))
    tool = registry.get("mcp__ev__trigger-long-running-operation")
    result = await tool.run({"duration": 1, "steps": 4}, ctx)
    assert not result.is_error, result.content
    assert [fraction for fraction, _ in reports] == [0.25, 0.5, 0.75, 1.0]


async def test_big_tool_lists_get_names_and_a_schema_lookup(open_hub, tmp_path: Path) -> None:
    everything = str(npm_bin("mcp-server-everything"))
    hub, registry, _ = await open_hub({"ev": {"command": everything}}, tool_tokens=200)
    assert hub.compact and "mcp_tool_schema" in registry
    echo = registry.get("mcp__ev__echo")
    assert echo.parameters == {"type": "object", "additionalProperties": True}
    assert "\n" not in echo.description and "mcp_tool_schema" in echo.description
    looked = await call(registry, "mcp_tool_schema", {"names": ["mcp__ev__echo"]}, tmp_path)
    schema = json.loads(looked.content)
    assert "message" in schema["parameters"]["properties"]
    assert "message" in echo.parameters["properties"]  # from now on offered in full
    missing = await call(registry, "mcp_tool_schema", {"names": ["mcp__ev__nope"]}, tmp_path)
    assert missing.is_error and "mcp__ev__echo" in missing.content
