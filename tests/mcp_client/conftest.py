"""Helpers for the MCP client tests: a hub over configured servers, in this process."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from loom.config import load_config
from loom.mcp_client import McpHub, start_mcp
from loom.paths import LoomPaths
from loom.tools.base import ToolContext, ToolRegistry

BAD_SERVER = Path(__file__).with_name("bad_server.py")


def bad_server(*flags: str, **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(BAD_SERVER), *flags], **extra}


@pytest.fixture
async def open_hub(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """`await open_hub(servers, **mcp_settings)` -> (hub, registry, notices); every hub
    opened is closed at the end."""
    hubs: list[McpHub] = []

    async def make(
        servers: dict[str, Any], **settings: Any
    ) -> tuple[McpHub, ToolRegistry, list[str]]:
        from loom.session.assembly.toolset import default_registry

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


async def call(registry: ToolRegistry, name: str, args: dict[str, Any], root: Path) -> Any:
    tool = registry.get(name)
    assert tool is not None, f"{name} not in {registry.names()}"
    return await tool.run(args, ToolContext(project_root=root))
