"""`loom mcp serve`: Loom as an MCP server (a face over `loom.session`).

Tools: Loom's built-in tools, confined to the project like everywhere else, plus
`thread_search` and `thread_show`; threads are resources `loom://threads/T-...`.
Permissions are enforced: read-only tools run, a tool that would ask uses MCP
elicitation when the client supports it and is refused otherwise (with how to grant it).

    await serve_stdio(workspace, allow=["file_write"])
    await serve_http(workspace, port=8765, token="...")
"""

from loom.mcp.serve import serve_http, serve_stdio

__all__ = ["serve_http", "serve_stdio"]
