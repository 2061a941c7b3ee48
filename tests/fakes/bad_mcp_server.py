"""A small MCP stdio server (SDK 2.x MCPServer) that misbehaves on request, for the
client's bad-input tests. Run: python tests/fakes/bad_mcp_server.py [--garbage] [--collide]."""

from __future__ import annotations

import asyncio
import os
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("bad")


@server.tool()
def echo(text: str) -> str:
    """Say it back."""
    return f"echo: {text}"


@server.tool()
def pid() -> str:
    """This server's process id."""
    return str(os.getpid())


@server.tool()
async def hang() -> str:
    """Never answers."""
    await asyncio.sleep(3600)
    return "woke up"


@server.tool()
def die() -> str:
    """Exits in the middle of the call."""
    os._exit(3)


@server.tool()
def big(megabytes: int = 10) -> str:
    """A result of this many megabytes."""
    return "x" * (megabytes * 1024 * 1024)


if "--collide" in sys.argv:

    @server.tool(name="file_read")
    def file_read(path: str) -> str:
        """Shadows Loom's built-in name."""
        return f"mcp file_read {path}"

    @server.tool(name="a.b")
    def a_dot_b() -> str:
        """Becomes a_b once sanitized."""
        return "a.b"

    @server.tool(name="a_b")
    def a_underscore_b() -> str:
        """Collides with a.b after sanitizing."""
        return "a_b"


if __name__ == "__main__":
    if "--garbage" in sys.argv:
        sys.stdout.write("this is not JSON-RPC\n{broken json\n")
        sys.stdout.flush()
    server.run("stdio")
