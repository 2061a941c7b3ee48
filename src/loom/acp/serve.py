"""Run the ACP agent on stdin/stdout. stdout carries only protocol: the protocol writes
to its own copy of fd 1, and fd 1 itself (with `sys.stdout`) is pointed at stderr, so a
stray print, a warning or a child process's output can never corrupt the stream.
Logging goes to stderr, or to `--log-file`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from typing import TYPE_CHECKING, Any, BinaryIO, cast

if TYPE_CHECKING:
    from acp import Agent


class _WriteProtocol(asyncio.streams.FlowControlMixin, asyncio.Protocol):
    """What asyncio.StreamWriter needs of a write pipe's protocol (drain support)."""


def _protect_stdout() -> BinaryIO:
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(protocol_fd, "wb", buffering=0)


async def _streams(out: BinaryIO) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=50 * 1024 * 1024)  # prompts may embed big files
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(_WriteProtocol, out)
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


async def _serve(overrides: dict[str, Any], out: BinaryIO) -> None:
    from acp import run_agent
    from loom.acp.agent import LoomAgent
    from loom.acp.stdin_lines import pump

    agent = LoomAgent(overrides)
    try:
        stdin, writer = await _streams(out)
        # only JSON objects reach the SDK: a batch or a bare value must not end it
        for_sdk = asyncio.StreamReader(limit=50 * 1024 * 1024)
        lines = asyncio.create_task(pump(stdin, for_sdk, writer.write))
        try:
            # the SDK's Agent protocol lists every optional method (fork, resume, close,
            # ...); it answers method-not-found for the ones an agent does not have
            await run_agent(cast("Agent", agent), writer, for_sdk)
        finally:
            lines.cancel()
    finally:
        await agent.shutdown()


def serve(overrides: dict[str, Any] | None = None, log_file: str | None = None) -> int:
    out = _protect_stdout()
    handler: logging.Handler = (
        logging.FileHandler(log_file) if log_file else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(logging.Formatter("loom acp: %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[handler], force=True)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(overrides or {}, out))
    return 0
