"""A project that defines its own MCP server in `.mcp.json` (the faces' approval tests):
`helper`, the test stdio server beside this file, whose `echo` tool answers "echo: ..."."""

from __future__ import annotations

import json
import sys
from pathlib import Path

HELPER = Path(__file__).parent / "bad_server.py"


def define_helper_server(project: Path) -> Path:
    """Write `.mcp.json` defining `helper` in `project`; returns the server's script."""
    servers = {"helper": {"command": sys.executable, "args": [str(HELPER)]}}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    return HELPER
