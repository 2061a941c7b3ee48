"""ACP `mcpServers` (from session/new and session/load) as the plain dicts the Workspace's
MCP client takes for one session: stdio (name, command, args, env) or http (name, url,
headers). SSE servers are refused in one line: Loom speaks stdio and streamable HTTP."""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)


def loom_mcp_servers(servers: list[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for server in servers:
        data = server.model_dump(exclude_none=True) if hasattr(server, "model_dump") else server
        if not isinstance(data, dict):
            continue
        data.pop("field_meta", None)
        kind = data.get("type", "stdio")
        if kind == "sse":
            log.warning("MCP server %r uses SSE, which Loom does not speak; skipped "
                        "(give its streamable HTTP url instead)", data.get("name"))  # fmt: skip
            continue
        if kind == "acp":
            log.warning("MCP server %r is an ACP-transport server; skipped", data.get("name"))
            continue
        data.pop("type", None)
        out.append(data)
    return out
