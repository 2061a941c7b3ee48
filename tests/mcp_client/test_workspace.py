"""MCP through the Workspace, the way every face starts sessions: servers a face passes
for one session (ACP's `mcpServers`), the first turn seeing their tools, the result in
the thread, and the servers gone when the session stops."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import psutil

from loom.config import load_config
from loom.llm.scripted import ScriptedProvider, tool_turn
from loom.session import SessionSpec, Workspace
from tests.support.mcp import BAD_SERVER


def _servers_of_this_process() -> list[psutil.Process]:
    return [
        child
        for child in psutil.Process().children(recursive=True)
        if str(BAD_SERVER) in " ".join(child.cmdline())
    ]


async def test_session_servers_reach_the_first_turn_and_stop_with_the_session(
    tmp_path: Path,
) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    provider = ScriptedProvider([tool_turn("mcp__acp__echo", {"text": "from acp"}), "done"])
    workspace = Workspace(load_config(tmp_path), provider_factory=lambda _model: provider)
    notices: list[str] = []
    spec = SessionSpec(
        model="anthropic:claude-sonnet-4-6",
        auto_approve=True,
        cwd=tmp_path,
        mcp_servers=[
            {
                "name": "acp",
                "command": sys.executable,
                "args": [str(BAD_SERVER)],
                "env": [{"name": "X", "value": "1"}],
            },
            {"name": "broken", "command": "no-such-program-xyz", "args": []},
        ],
        on_mcp_notice=notices.append,
    )
    session = await workspace.start_session(spec)
    answer = await session.send_message("echo via the session's server")
    assert answer == "done"
    first_tools = [tool.name for tool in provider.requests[0].tools]
    assert "mcp__acp__echo" in first_tools  # the first turn waited for the server
    tool_message = next(m for m in session.get_history() if m.role == "tool")
    assert tool_message.tool_name == "mcp__acp__echo" and tool_message.content == "echo: from acp"
    assert ["broken" in line and "cannot run" in line for line in notices] == [True]
    assert _servers_of_this_process()
    await workspace.shutdown()
    for process in _servers_of_this_process():
        assert process.status() == psutil.STATUS_ZOMBIE


async def test_no_servers_no_sdk(tmp_path: Path) -> None:
    code = (
        "import sys, asyncio; from pathlib import Path;"
        "from loom.config import load_config; from loom.session import SessionSpec, Workspace;"
        "from loom.llm.scripted import ScriptedProvider;"
        f"ws = Workspace(load_config(Path({str(tmp_path)!r})),"
        " provider_factory=lambda m: ScriptedProvider());"
        "asyncio.run(ws.start_session(SessionSpec(model='anthropic:claude-sonnet-4-6')));"
        "print('mcp' in sys.modules, 'loom.mcp_client' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert done.stdout.strip() == "False False"


def test_version_and_list_do_not_import_the_sdk(tmp_path: Path) -> None:
    for args in (["--version"], ["list"]):
        code = (
            "import sys, runpy; sys.argv = ['loom', *" + repr(args) + "];"
            "import loom.__main__ as m\n"
            "try:\n    m.main()\nexcept SystemExit:\n    pass\n"
            "print('MODS', 'mcp' in sys.modules, 'loom.mcp_client' in sys.modules,"
            " 'loom.cli.mcp' in sys.modules)"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
        )
        assert "MODS False False False" in done.stdout, (args, done.stdout, done.stderr)


async def test_without_a_notice_callback_problems_are_events_of_the_first_turn(
    tmp_path: Path,
) -> None:
    config = load_config(tmp_path, {"mcp": {"servers": {"gone": {"command": "no-such-xyz"}}}})
    workspace = Workspace(config, provider_factory=lambda _model: ScriptedProvider(["ok"]))
    session = await workspace.start_session(SessionSpec(model="anthropic:claude-sonnet-4-6"))
    events: list = []
    session.subscribe(events.append)  # after start: the failure happened before this
    await session.send_message("hi")
    errors = [e for e in events if e.type == "error"]
    assert [e.origin for e in errors] == ["Tool"]
    assert "'gone'" in errors[0].message and "cannot run 'no-such-xyz'" in errors[0].message
    await workspace.shutdown()
