"""Run a subprocess in its own process group: output capped (head and tail kept),
timeout, and a clean kill of the whole group on timeout or cancellation (no orphans)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from loom._timeouts import within
from loom.tools._launcher import CommandLauncher, start_launch
from loom.tools.agent_env import agent_environ
from loom.tools.base import ToolContext

KILL_GRACE_S = 2.0  # SIGTERM first, SIGKILL after this
DRAIN_AFTER_EXIT_S = 0.5  # background children holding the pipe open get this long
PROGRESS_EVERY_S = 2.0


@dataclass
class ProcessOutcome:
    output: str
    exit_code: int | None  # None: killed after a timeout
    timed_out: bool
    total_bytes: int
    omitted_bytes: int
    notes: tuple[str, ...] = ()  # from the launcher, once the command is over


class _CappedBuffer:
    """Keeps the first and last `cap // 2` bytes of a stream."""

    def __init__(self, cap: int) -> None:
        self.head_cap = cap // 2
        self.tail_cap = cap - self.head_cap
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.tail_cap:
                del self.tail[: len(self.tail) - self.tail_cap]

    def text(self) -> tuple[str, int]:
        omitted = self.total - len(self.head) - len(self.tail)
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        if omitted > 0:
            return f"{head}\n\n[... {omitted:,} bytes of output omitted ...]\n\n{tail}", omitted
        return head + tail, 0

    def last_line(self) -> str:
        source = self.tail or self.head
        lines = source.decode("utf-8", errors="replace").strip().splitlines()
        return lines[-1][:200] if lines else ""


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


async def _stop_group(process: asyncio.subprocess.Process) -> None:
    _signal_group(process.pid, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await within(process.wait(), KILL_GRACE_S)
    _signal_group(process.pid, signal.SIGKILL)  # also the children that ignored SIGTERM
    await process.wait()


def tool_env(
    extra: Mapping[str, str | None] | None = None, pass_env: Sequence[str] = ()
) -> dict[str, str]:
    """The environment of agent commands; `extra` sets variables (None removes one)."""
    env = agent_environ(pass_env)  # no secrets unless `[shell] pass_env` names them
    env.update(
        PAGER="cat",
        GIT_PAGER="cat",
        GIT_TERMINAL_PROMPT="0",
        GIT_EDITOR="true",
        NO_COLOR="1",
        TERM="dumb",
    )
    for name, value in (extra or {}).items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


async def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    timeout: float,
    max_output_bytes: int,
    ctx: ToolContext | None = None,
    label: str = "",
    extra_env: Mapping[str, str | None] | None = None,
    pass_env: Sequence[str] = (),
    launcher: CommandLauncher | None = None,
) -> ProcessOutcome:
    launch = start_launch(argv, cwd, launcher)
    argv, launch_fds = launch.argv, launch.fds
    try:
        outcome = await _run_launched(
            argv, launch_fds, cwd, timeout, max_output_bytes, ctx, label, extra_env, pass_env
        )
    except BaseException:
        launch.finish()  # the checks still run (and clean up) when cancelled
        raise
    notes = await asyncio.to_thread(launch.finish)
    outcome.notes = tuple(notes)
    return outcome


async def _run_launched(
    argv: Sequence[str],
    launch_fds: tuple[int, ...],
    cwd: Path,
    timeout: float,
    max_output_bytes: int,
    ctx: ToolContext | None,
    label: str,
    extra_env: Mapping[str, str | None] | None,
    pass_env: Sequence[str],
) -> ProcessOutcome:
    # The output goes through our own pipe, not the subprocess transport's: asyncio's
    # `wait()` would otherwise also wait for background children that keep it open.
    read_fd, write_fd = os.pipe()
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=write_fd,
            stderr=write_fd,
            start_new_session=True,
            env=tool_env(extra_env, pass_env),
            pass_fds=launch_fds,
        )
    )
    try:
        # Shielded: a cancel while starting must still find (and stop) the process.
        process = await asyncio.shield(spawn)
    except asyncio.CancelledError:
        with contextlib.suppress(BaseException):
            await _stop_group(await spawn)
        os.close(read_fd)
        raise
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)
        for fd in launch_fds:
            os.close(fd)
    pipe_file = os.fdopen(read_fd, "rb", buffering=0)
    buffer = _CappedBuffer(max_output_bytes)
    stream = asyncio.StreamReader()
    transport: asyncio.BaseTransport | None = None
    reader: asyncio.Task[None] | None = None
    reporter: asyncio.Task[None] | None = None

    async def pump() -> None:
        while chunk := await stream.read(65536):
            buffer.add(chunk)

    async def progress() -> None:
        started = time.monotonic()
        if ctx is not None:
            await ctx.report(None, f"running {label}")
            while True:
                await asyncio.sleep(PROGRESS_EVERY_S)
                elapsed = int(time.monotonic() - started)
                last = buffer.last_line()  # (no ", " after nothing: no output yet)
                await ctx.report(None, f"{label}: {elapsed} s" + (f", {last}" if last else ""))

    timed_out = False
    try:
        transport, _ = await asyncio.get_running_loop().connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(stream), pipe_file
        )
        reader = asyncio.create_task(pump())
        reporter = asyncio.create_task(progress())
        try:
            await within(process.wait(), timeout)
        except TimeoutError:
            timed_out = True
            await _stop_group(process)
        try:  # children left in the background may keep the pipe open
            await within(asyncio.shield(reader), DRAIN_AFTER_EXIT_S)
        except TimeoutError:
            _signal_group(process.pid, signal.SIGKILL)
            await reader
    except BaseException:
        await asyncio.shield(_stop_group(process))
        raise
    finally:
        for task in (reporter, reader):
            if task is not None and not task.done():
                task.cancel()
        if transport is not None:
            transport.close()
        else:
            pipe_file.close()
        _signal_group(process.pid, signal.SIGKILL)  # nothing of the group outlives the call
    text, omitted = buffer.text()
    return ProcessOutcome(
        output=text,
        exit_code=None if timed_out else process.returncode,
        timed_out=timed_out,
        total_bytes=buffer.total,
        omitted_bytes=omitted,
    )
