"""stdin for `loom mcp serve`, read by the event loop rather than by a worker thread.

The MCP SDK reads stdin in a worker thread that nothing interrupts: Ctrl-C cancelled the
server, which then waited for that read, that is for the client's next line, for ever
when the client was idle (issue 26: every face ends within a second of SIGINT). Here the
loop reads the pipe without blocking, so cancelling stops the read at once. While it
serves, fd 0 is the null device (as the SDK does it), so no command a tool runs reads the
protocol's bytes; the wire and its blocking mode are put back when it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import stat
from collections.abc import AsyncIterator

LINE_LIMIT = 64 * 1024 * 1024  # a file_write call can carry a big file


class PipeLines:
    """The lines of a StreamReader as text, as the SDK's `async for line in stdin` reads."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> PipeLines:
        return self

    async def __anext__(self) -> str:
        try:
            line = await self._reader.readline()
        except ValueError:  # longer than LINE_LIMIT: dropped; the SDK reports a bad line
            return "\n"
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


def _is_stream(fd: int) -> bool:
    """A pipe, socket or terminal: what can wait for ever (a regular file never does)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


@contextlib.asynccontextmanager
async def loop_stdin(fd: int = 0) -> AsyncIterator[PipeLines | None]:
    """stdin's lines read by the running loop; None when stdin is not a stream (a file
    given as stdin: the SDK's own reader is fine for it)."""
    if not _is_stream(fd):
        yield None
        return
    wire = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)  # kept to put back at the end
    flags = fcntl.fcntl(wire, fcntl.F_GETFL)  # shared with the terminal or the client
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, fd)
    os.close(null)
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    loop = asyncio.get_running_loop()
    # the transport closes its own copy at end of file
    pipe = os.fdopen(fcntl.fcntl(wire, fcntl.F_DUPFD_CLOEXEC, 3), "rb", buffering=0)
    transport = None
    try:
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe
        )
        yield PipeLines(reader)
    finally:
        if transport is not None:
            transport.close()
        else:
            pipe.close()
        os.dup2(wire, fd)
        os.close(wire)
        fcntl.fcntl(fd, fcntl.F_SETFL, flags)  # a terminal left non-blocking breaks its shell
