"""MCP servers as a person manages them (`loom mcp list|add|remove|approve`): which are
configured, whether they start, their tools and what those cost in tokens; adding and
removing `[mcp.servers.NAME]` tables; approving project-defined servers."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from loom.config import LoomConfig
from loom.core.errors import LoomError
from loom.paths import LoomPaths


class McpAdminError(LoomError):
    """A request a person must correct; the message says how."""


def server_specs(config: LoomConfig) -> list[Any]:
    from loom.mcp_client import load_server_specs

    return load_server_specs(config)


def find_mcp_server(config: LoomConfig, name: str) -> Any:
    for spec in server_specs(config):
        if spec.name == name:
            return spec
    names = ", ".join(s.name for s in server_specs(config)) or "none"
    raise McpAdminError(f"no MCP server named {name!r} (configured: {names}); see `loom mcp list`")


def unapproved_mcp_servers(config: LoomConfig, paths: LoomPaths | None = None) -> list[Any]:
    """Project-defined servers that would start but were never approved (as defined now)."""
    if not config.mcp.servers and not (config.project_root / ".mcp.json").is_file():
        return []  # the common case costs no import
    from loom.mcp_client import ApprovalStore

    paths = paths or LoomPaths.from_env()
    store = ApprovalStore(paths.database, config.project_root)
    return [
        spec
        for spec in server_specs(config)
        if spec.needs_approval and spec.enabled and not spec.problem and not store.is_approved(spec)
    ]


def approve_project_mcp_server(
    config: LoomConfig, name: str, paths: LoomPaths | None = None
) -> Any:
    """Approve a project-defined server as it is defined now; returns its spec."""
    from loom.mcp_client import ApprovalStore

    spec = find_mcp_server(config, name)
    if spec.problem:
        raise McpAdminError(f"MCP server {name!r} cannot start: {spec.problem}")
    paths = paths or LoomPaths.from_env()
    ApprovalStore(paths.database, config.project_root).approve(spec)
    return spec


async def probe_mcp_servers(config: LoomConfig, paths: LoomPaths | None = None) -> list[Any]:
    """Start every server as a session would, list their tools, stop them: statuses."""
    from loom.mcp_client import start_mcp
    from loom.tools.base import ToolRegistry

    paths = paths or LoomPaths.from_env()
    hub = start_mcp(config, ToolRegistry(), paths=paths, on_notice=lambda line: None)
    if hub is None:
        return []
    try:
        await hub.wait_ready(config.mcp.startup_timeout + 1)
        return hub.statuses()
    finally:
        await hub.aclose()


# -- editing config files --------------------------------------------------------------

_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def add_mcp_server(
    file: Path,
    name: str,
    *,
    command: Sequence[str] = (),
    url: str | None = None,
    env: dict[str, str] | None = None,
    headers: dict[str, str] | None = None,
    timeout: float | None = None,
) -> None:
    """Append `[mcp.servers.NAME]` to a config file (creating it), keeping what is there."""
    if not _NAME.fullmatch(name):
        raise McpAdminError(f"server name {name!r}: use letters, digits, '_', '-', '.'")
    if bool(command) == bool(url):
        raise McpAdminError("give either a command (after `--`) or --url, not both or neither")
    text = file.read_text(encoding="utf-8") if file.is_file() else ""
    if _table_header(name).search(text):
        raise McpAdminError(f"{file} already has [mcp.servers.{name}]; `loom mcp remove {name}`")
    lines = [f"[mcp.servers.{_key(name)}]"]
    if command:
        lines.append(f"command = {json.dumps(command[0])}")
        if len(command) > 1:
            lines.append(f"args = {json.dumps(list(command[1:]))}")
    else:
        lines.append(f"url = {json.dumps(url)}")
    if timeout is not None:
        lines.append(f"timeout = {float(timeout)}")
    for table, values in (("env", env), ("headers", headers)):
        if values:
            pairs = ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in values.items())
            lines.append(f"{table} = {{ {pairs} }}")
    block = "\n".join(lines) + "\n"
    if text and not text.endswith("\n"):
        text += "\n"
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text + ("\n" if text else "") + block, encoding="utf-8")


def remove_mcp_server(file: Path, name: str) -> bool:
    """Delete `[mcp.servers.NAME]` (and its sub-tables) from a config file."""
    if not file.is_file():
        return False
    lines = file.read_text(encoding="utf-8").splitlines(keepends=True)
    own = re.compile(rf"^\s*\[\s*mcp\.servers\.\"?{re.escape(name)}\"?(\.[^\]]*)?\s*\]")
    kept, skipping, removed = [], False, False
    for line in lines:
        if line.lstrip().startswith("["):
            skipping = bool(own.match(line))
            removed = removed or skipping
        if not skipping:
            kept.append(line)
    if removed:
        file.write_text("".join(kept).rstrip("\n") + "\n", encoding="utf-8")
    return removed


def _table_header(name: str) -> re.Pattern[str]:
    return re.compile(rf"^\s*\[\s*mcp\.servers\.\"?{re.escape(name)}\"?\s*\]", re.MULTILINE)


def _key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name)
