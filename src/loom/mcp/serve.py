"""Running the MCP server over stdio or streamable HTTP (127.0.0.1, bearer token)."""

from __future__ import annotations

import hmac
import sys
from collections.abc import Iterable
from typing import Any, TextIO, cast

import anyio

from loom.mcp.server import build_server
from loom.session import ToolAccess, Workspace

HOST = "127.0.0.1"
PATH = "/mcp"


async def serve_stdio(
    workspace: Workspace, *, allow: Iterable[str] = (), include_private: bool = False
) -> None:
    """Serve one client on this process's stdin/stdout until it closes them (or a signal
    cancels this: stdin is read by the loop, so that never waits for the client)."""
    from mcp.server.stdio import stdio_server

    from loom.mcp.stdin_pipe import loop_stdin

    access = ToolAccess(workspace, allow=allow, include_private=include_private)
    server = build_server(access)
    try:
        async with (
            loop_stdin() as stdin,
            stdio_server(stdin=cast("Any", stdin)) as (read_stream, write_stream),
        ):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    except* anyio.BrokenResourceError:
        pass  # a line still on its way when a signal stopped the server: nobody reads it now
    finally:
        await access.aclose()
        await workspace.shutdown()


async def serve_http(
    workspace: Workspace,
    *,
    port: int,
    token: str,
    allow: Iterable[str] = (),
    announce: TextIO = sys.stderr,
    token_shown: bool = True,
    include_private: bool = False,
) -> None:
    """Serve streamable HTTP on 127.0.0.1:`port` (0: a free one) at /mcp; every request
    needs `Authorization: Bearer <token>`. OSError when the port cannot be bound."""
    import socket

    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))  # before saying where to connect
    except OSError:
        sock.close()
        raise
    port = sock.getsockname()[1]
    access = ToolAccess(workspace, allow=allow, include_private=include_private)
    server = build_server(access)
    app = BearerAuth(server.streamable_http_app(streamable_http_path=PATH, host=HOST), token)
    uv_config = uvicorn.Config(app, log_level="warning", lifespan="on")
    uv_server = uvicorn.Server(uv_config)
    shown = token if token_shown else "(from LOOM_MCP_TOKEN)"
    try:
        announce.write(
            f"loom mcp serve: http://{HOST}:{port}{PATH}\n"
            f"loom mcp serve: send the header `Authorization: Bearer {shown}`\n"
        )
        announce.flush()
        await uv_server.serve(sockets=[sock])
    finally:
        sock.close()
        await access.aclose()
        await workspace.shutdown()


class BearerAuth:
    """ASGI wrapper: 401 unless the request carries the bearer token."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            given = headers.get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await _unauthorized(send)
                return
        await self.app(scope, receive, send)


async def _unauthorized(send: Any) -> None:
    body = b'{"error": "missing or wrong bearer token; see `loom mcp serve --http` output"}'
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"www-authenticate", b"Bearer"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
