"""Server-sent events read straight from the response bytes, for the OpenAI and
Anthropic adapters.

The SDK's decoder handles each line and each event through several Python generators
(a regex per chunk, a `str` per line, `json.loads`, the SDK's response processing): at
20 sessions streaming it was ~40% of the event loop's work, several times what reading
the same stream with plain httpx costs. Here a read's complete lines are split in one
call, fields stay bytes, and each event's data goes to orjson once.

Lines end in LF, CRLF or CR (a CR at the end of a read may be half a CRLF: that line
waits for the next read). Only `event` and `data` fields are kept (`id` and `retry`
do not matter to a model stream); comment lines (keep-alives) are skipped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import orjson

DRAIN_S = 1.0  # reading what follows [DONE], so the connection can be reused


async def sse_events(
    chunks: AsyncIterator[bytes], others: list[bytes] | None = None
) -> AsyncGenerator[tuple[bytes, bytes], None]:
    """(event name, data) of every event in the stream; b"" when an event has no name.
    Lines that are no SSE field (`data`, `event`, `id`, `retry`) go to `others` if given."""
    pending = b""
    name = b""
    data: list[bytes] = []
    async for chunk in chunks:
        if not chunk:
            continue
        lines = (pending + chunk).splitlines(keepends=True)
        # a last line unterminated or ending in CR (maybe half a CRLF) waits for more
        pending = b"" if lines[-1].endswith(b"\n") else lines.pop()
        for line in lines:
            line = line.rstrip(b"\r\n")
            if not line:
                if data or name:
                    yield name, b"\n".join(data)
                name, data = b"", []
            elif line[0] == 58:  # b":" a comment
                continue
            else:
                field, _, value = line.partition(b":")
                if value[:1] == b" ":
                    value = value[1:]
                if field == b"data":
                    data.append(value)
                elif field == b"event":
                    name = value
                elif others is not None and field not in (b"id", b"retry"):
                    others.append(line)
    for line in pending.splitlines():  # the stream ended without a last newline
        field, _, value = line.partition(b":")
        if field == b"data":
            data.append(value[1:] if value[:1] == b" " else value)
        elif others is not None and field not in (b"event", b"id", b"retry"):
            others.append(line)
    if data:
        yield name, b"\n".join(data)


async def drain(chunks: AsyncIterator[bytes]) -> None:
    """Read the rest of a response body (briefly), so its connection goes back to the
    pool instead of being closed unread."""
    with contextlib.suppress(Exception, TimeoutError):
        async with asyncio.timeout(DRAIN_S):
            async for _ in chunks:
                pass


def loads(data: bytes) -> Any:
    """An event's JSON. orjson refuses what the standard library reads (a lone surrogate
    escape such as `"\\ud83d"`, which models do send): such data is read the slow way."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)
