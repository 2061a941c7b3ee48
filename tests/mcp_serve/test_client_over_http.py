"""Loom's MCP client over streamable HTTP, against `loom mcp serve --http`: headers from
the config, a clear line when the token is missing, reconnection after a restart."""

from __future__ import annotations

from pathlib import Path

from tests.support.mcp import call, serve_http
from tests.support.net import free_port


async def test_http_server_tools_headers_and_reconnect(open_hub, proj: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    process, _ = serve_http(proj, port, LOOM_MCP_TOKEN="tok")
    try:
        _, registry, notices = await open_hub(
            {
                "loom": {"url": url, "headers": {"Authorization": "Bearer tok"}},
                "nokey": {"url": url},
            }
        )
        (notice,) = notices
        assert "'nokey'" in notice and f"cannot reach {url}" in notice and "token" in notice
        read = await call(registry, "mcp__loom__file_read", {"path": "a.txt"}, proj)
        assert "hello from a" in read.content and not read.is_error
        process.terminate()
        process.wait(timeout=30)
        down = await call(registry, "mcp__loom__file_read", {"path": "a.txt"}, proj)
        assert down.is_error and "cannot reach" in down.content
        process, _ = serve_http(proj, port, LOOM_MCP_TOKEN="tok")
        back = await call(registry, "mcp__loom__file_read", {"path": "a.txt"}, proj)
        assert "hello from a" in back.content, back.content
    finally:
        process.terminate()
        process.wait(timeout=30)
