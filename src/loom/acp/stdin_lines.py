"""What reaches the ACP SDK from stdin: one JSON-RPC object per line.

The SDK hands every line it parses to code that expects an object: a JSON-RPC batch
(`[{...}, {...}]`), a bare number or string made it raise and end the connection, and
with it every session the editor had open. Here a batch is split into its objects (each
answered on its own) and any other value is answered with JSON-RPC's Invalid Request
error, and the connection goes on. Text that is not JSON passes through: the SDK logs it
and reads the next line.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

INVALID_REQUEST = -32600


def invalid_request(what: str) -> bytes:
    error = {"code": INVALID_REQUEST, "message": f"Invalid Request: {what}; send one JSON object"}
    return json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode() + b"\n"


def lines_for_sdk(line: bytes, reply: Callable[[bytes], None]) -> list[bytes]:
    """The lines the SDK should see for one line read; `reply` answers what it must not."""
    text = line.strip()
    if not text:
        return []
    if text.startswith(b"{"):
        return [text + b"\n"]
    try:
        value: Any = json.loads(text)
    except ValueError:
        return [text + b"\n"]  # not JSON: the SDK reports it and goes on
    if not isinstance(value, list):
        reply(invalid_request(f"a JSON {type(value).__name__}"))
        return []
    if not value:
        reply(invalid_request("an empty batch"))
    found = []
    for item in value:
        if isinstance(item, dict):
            found.append(json.dumps(item).encode() + b"\n")
        else:
            reply(invalid_request(f"a JSON {type(item).__name__} in a batch"))
    return found


async def pump(
    source: asyncio.StreamReader, sink: asyncio.StreamReader, reply: Callable[[bytes], None]
) -> None:
    """Copy `source` to `sink` line by line through `lines_for_sdk`, then end `sink`."""
    try:
        while line := await _read_line(source):
            for out in lines_for_sdk(line, reply):
                sink.feed_data(out)
    finally:
        sink.feed_eof()


async def _read_line(source: asyncio.StreamReader) -> bytes:
    """One line however long (a prompt may embed big files); b"" at the end."""
    chunks: list[bytes] = []
    while True:
        try:
            chunks.append(await source.readuntil(b"\n"))
            return b"".join(chunks)
        except asyncio.LimitOverrunError as exc:
            chunks.append(await source.readexactly(exc.consumed))
        except asyncio.IncompleteReadError as exc:
            chunks.append(exc.partial)
            return b"".join(chunks)
