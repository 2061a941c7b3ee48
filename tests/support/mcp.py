"""MCP in tests: the misbehaving stdio server (tests/fakes/bad_mcp_server.py), a project
that defines it, Loom's client hub in this process, and `loom mcp serve --http`.

`open_hub` is a fixture (this module is registered in tests/conftest.py)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.npm_tools import INSPECTOR_CWD, inspector_js

BAD_SERVER = Path(__file__).parents[1] / "fakes" / "bad_mcp_server.py"
HELPER = BAD_SERVER  # the project's own server in the approval tests; its `echo` answers
SERVE = [sys.executable, "-m", "loom", "mcp", "serve"]


def bad_server(*flags: str, **extra: Any) -> dict[str, Any]:
    """A server entry (for `[mcp] servers`) that runs the bad server with `flags`."""
    return {"command": sys.executable, "args": [str(BAD_SERVER), *flags], **extra}


def define_helper_server(project: Path) -> Path:
    """Write `.mcp.json` defining `helper` in `project` (the faces' approval tests: its
    `echo` tool answers "echo: ..."); returns the server's script."""
    servers = {"helper": {"command": sys.executable, "args": [str(HELPER)]}}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    return HELPER


@pytest.fixture
async def open_hub(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """`await open_hub(servers, **mcp_settings)` -> (hub, registry, notices); every hub
    opened is closed at the end."""
    from loom.config import load_config
    from loom.mcp_client import McpHub, start_mcp
    from loom.paths import LoomPaths
    from loom.session.assembly.toolset import default_registry

    hubs: list[McpHub] = []

    async def make(servers: dict[str, Any], **settings: Any) -> tuple[McpHub, Any, list[str]]:
        config = load_config(tmp_path, {"mcp": {"servers": servers, **settings}})
        registry = default_registry(tmp_path, config)
        notices: list[str] = []
        hub = start_mcp(config, registry, paths=LoomPaths.from_env(), on_notice=notices.append)
        assert hub is not None
        hubs.append(hub)
        await hub.wait_ready(30)
        return hub, registry, notices

    yield make
    for hub in hubs:
        await hub.aclose()


async def call(registry: Any, name: str, args: dict[str, Any], root: Path) -> Any:
    """Run tool `name` of the registry with `args` in `root`; its ToolResult."""
    from loom.tools.base import ToolContext

    tool = registry.get(name)
    assert tool is not None, f"{name} not in {registry.names()}"
    return await tool.run(args, ToolContext(project_root=root))


def serve_http(project: Path, port: int, **env: str) -> tuple[subprocess.Popen[str], str]:
    """`loom mcp serve --http` on `port`; returns the process and what it announced, once
    the port is open."""
    process = subprocess.Popen(
        [*SERVE, "-C", str(project), "--http", "--port", str(port)],
        env={**os.environ, **env},
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    assert process.stderr is not None
    announced = ""
    while "Bearer" not in announced:
        line = process.stderr.readline()
        assert line, f"loom mcp serve --http exited: {announced}"
        announced += line
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # the port opens right after the announcement
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.1)
    return process, announced


def serve_stdio_params(project: Path, *flags: str, **env: str) -> Any:
    """How the Python SDK's client starts `loom mcp serve -C project FLAGS` over stdio,
    with this process's environment plus `env`."""
    from mcp import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable,
        args=[*SERVE[1:], "-C", str(project), *flags],
        env={**os.environ, **env},
    )


def inspect(target: list[str], *args: str, ok: bool = True) -> Any:
    """Run the inspector CLI against `target` (a command or a URL); its JSON answer."""
    done = subprocess.run(
        ["node", str(inspector_js()), *target, *args],
        cwd=INSPECTOR_CWD,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if not ok:
        return done
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout)


def text_of(result: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in result["content"] if block["type"] == "text")
