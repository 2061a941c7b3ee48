"""`loom mcp serve` driven by third-party clients: the MCP inspector's CLI (npm) over
stdio and streamable HTTP, and the Python SDK's client for elicitation."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.llm_server import FakeLlmServer, Turn
from tests.support.loom_cli import loom_in_process
from tests.support.mcp import SERVE, inspect, serve_http, text_of
from tests.support.net import free_port


def test_stdio_tools_list_and_call(proj: Path) -> None:
    listed = inspect([*SERVE, "-C", str(proj)], "--method", "tools/list")
    tools = {tool["name"]: tool for tool in listed["tools"]}
    assert {"file_read", "file_write", "shell", "git", "thread_search", "thread_show"} <= set(tools)
    assert tools["file_read"]["annotations"]["readOnlyHint"] is True
    assert tools["shell"]["annotations"]["readOnlyHint"] is False
    read = inspect(
        [*SERVE, "-C", str(proj)],
        *("--method", "tools/call", "--tool-name", "file_read", "--tool-arg", "path=a.txt"),
    )
    assert read["isError"] is False and "hello from a" in text_of(read)


def test_tools_stay_inside_the_project(proj: Path) -> None:
    outside = inspect(
        [*SERVE, "-C", str(proj)],
        *("--method", "tools/call", "--tool-name", "file_read", "--tool-arg", "path=/etc/passwd"),
    )
    assert outside["isError"] is True and "outside the project" in text_of(outside)


def test_secrets_are_masked_in_results(proj: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEPLOY_TOKEN", "dtok-0123456789abcdef")
    (proj / "conf.txt").write_text("token = dtok-0123456789abcdef\n")
    read = inspect(
        [*SERVE, "-C", str(proj)],
        *("--method", "tools/call", "--tool-name", "file_read", "--tool-arg", "path=conf.txt"),
    )
    assert "dtok-0123456789abcdef" not in text_of(read)
    assert "[redacted:DEPLOY_TOKEN]" in text_of(read)


def test_would_ask_tool_is_refused_with_how_to_grant_then_allowed(proj: Path) -> None:
    call = ("--method", "tools/call", "--tool-name", "file_write")
    args = ("--tool-arg", "path=b.txt", "content=written")
    refused = inspect([*SERVE, "-C", str(proj)], *call, *args)
    assert refused["isError"] is True
    message = text_of(refused)
    assert "--allow file_write" in message and "auto_approve" in message
    assert not (proj / "b.txt").exists()
    allowed = inspect([*SERVE, "-C", str(proj), "--allow", "file_write"], *call, *args)
    assert allowed["isError"] is False, text_of(allowed)
    assert (proj / "b.txt").read_text() == "written"


def test_threads_are_searchable_showable_and_resources(
    server: FakeLlmServer,
    project: Path,
) -> None:
    server.add(Turn(text="Look at auth.py first."))
    ran = loom_in_process(
        ["run", "-p", "fix the flaky login redirect", "-o", "json"], project, server
    )
    thread_id = json.loads(ran.stdout)["thread_id"]
    target = [*SERVE, "-C", str(project)]
    search = ("--tool-name", "thread_search", "--tool-arg", "query=login")
    found = inspect(target, "--method", "tools/call", *search)
    hits = json.loads(text_of(found))
    assert hits[0]["id"] == thread_id and "snippet" in hits[0]
    shown = inspect(
        target,
        *("--method", "tools/call", "--tool-name", "thread_show", "--tool-arg", f"id={thread_id}"),
    )
    assert "fix the flaky login redirect" in text_of(shown) and "auth.py" in text_of(shown)
    resources = inspect(target, "--method", "resources/list")["resources"]
    uri = f"loom://threads/{thread_id}"
    assert uri in [resource["uri"] for resource in resources]
    read = inspect(target, "--method", "resources/read", "--uri", uri)
    assert "Look at auth.py first." in read["contents"][0]["text"]
    missing = inspect(
        target, "--method", "tools/call", "--tool-name", "thread_show", "--tool-arg", "id=T-nope"
    )
    assert missing["isError"] is True and "thread_search" in text_of(missing)


def test_http_needs_the_bearer_token(proj: Path) -> None:
    port = free_port()
    process, announced = serve_http(proj, port)
    try:
        found = re.search(r"Bearer (\S+)`", announced)
        assert found is not None, announced
        token = found.group(1)
        url = f"http://127.0.0.1:{port}/mcp"
        assert url in announced
        denied = inspect([url], "--method", "tools/list", ok=False)
        assert denied.returncode != 0 and "bearer token" in (denied.stdout + denied.stderr)
        wrong = ("--header", "Authorization: Bearer wrong")
        assert inspect([url], *wrong, "--method", "tools/list", ok=False).returncode != 0
        header = ("--header", f"Authorization: Bearer {token}")
        listed = inspect([url], *header, "--method", "tools/list")
        assert "thread_search" in [tool["name"] for tool in listed["tools"]]
        read = inspect(
            [url],
            *header,
            *("--method", "tools/call", "--tool-name", "file_read", "--tool-arg", "path=a.txt"),
        )
        assert "hello from a" in text_of(read)
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_http_port_in_use_is_one_clear_error(proj: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [*SERVE, "-C", str(proj), "--http", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 1
    assert f"cannot serve on 127.0.0.1:{port}" in done.stderr and "--port" in done.stderr
    assert "Bearer" not in done.stderr  # nothing announced that does not work


def test_http_token_from_the_environment_is_not_printed(proj: Path) -> None:
    port = free_port()
    process, announced = serve_http(proj, port, LOOM_MCP_TOKEN="s3cret-token")
    try:
        assert "s3cret-token" not in announced and "LOOM_MCP_TOKEN" in announced
        header = ("--header", "Authorization: Bearer s3cret-token")
        listed = inspect([f"http://127.0.0.1:{port}/mcp"], *header, "--method", "tools/list")
        assert listed["tools"]
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.mark.parametrize(("answer", "written"), [("allow_once", True), ("deny", False)])
async def test_would_ask_tool_uses_elicitation(proj: Path, answer: str, written: bool) -> None:
    import mcp_types as types
    from mcp import Client, StdioServerParameters

    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"decision": answer})

    params = StdioServerParameters(
        command=sys.executable, args=[*SERVE[1:], "-C", str(proj)], env=dict(os.environ)
    )
    async with Client(params, mode="legacy", elicitation_callback=elicit) as client:
        result = await client.call_tool("file_write", {"path": "c.txt", "content": "via mcp"})
    assert asked and "file_write" in asked[0]
    assert (proj / "c.txt").exists() is written
    assert result.is_error is (not written)
