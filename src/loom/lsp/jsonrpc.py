"""JSON-RPC 2.0 framing as LSP uses it over stdio (Content-Length headers)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

MAX_MESSAGE_BYTES = 64 * 1024 * 1024


class ProtocolError(Exception):
    """The server wrote something that is not a well-formed LSP message."""


def encode(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def read_message(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    """The next message, or None at end of stream."""
    length: int | None = None
    while True:
        line = await reader.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            if length is None:
                continue  # tolerate stray blank lines between messages
            break
        name, _, value = line.decode("ascii", "replace").partition(":")
        if name.strip().lower() == "content-length":
            try:
                length = int(value.strip())
            except ValueError:
                raise ProtocolError(f"bad Content-Length header: {line!r}") from None
    if length < 0 or length > MAX_MESSAGE_BYTES:
        raise ProtocolError(f"message of {length} bytes is out of range")
    body = await reader.readexactly(length)
    try:
        message = json.loads(body)
    except ValueError as exc:
        raise ProtocolError(f"message body is not JSON: {exc}") from None
    if not isinstance(message, dict):
        raise ProtocolError("message body is not a JSON object")
    return message
