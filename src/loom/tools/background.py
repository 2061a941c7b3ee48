"""Background commands of one session: `shell` with `background: true` starts one and
answers at once with its id; `shell_output` reads what it printed since the last read;
`shell_kill` ends its whole process group. Each keeps its output in a bounded buffer
(older output dropped, with a marker); at most `limit` run at once; all of them end when
the session closes (its cleanup)."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import re
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from loom._timeouts import within
from loom.tools._launcher import CommandLauncher, Launch, start_launch
from loom.tools._process import _signal_group, _stop_group, tool_env
from loom.tools.base import ToolError

log = logging.getLogger(__name__)

DEFAULT_LIMIT = 4
DEFAULT_BUFFER_BYTES = 1024 * 1024
MAX_WAIT_S = 60.0


@dataclass
class _Ring:
    """About the last `cap` bytes of a stream, kept as whole chunks (dropping a chunk from
    the front costs nothing, where trimming one buffer moved up to `cap` bytes per read),
    with absolute offsets (what a reader saw)."""

    cap: int
    chunks: collections.deque[bytes] = field(default_factory=collections.deque)
    kept: int = 0  # bytes in `chunks`
    total: int = 0  # bytes written since the start

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.chunks.append(chunk)
        self.kept += len(chunk)
        while self.kept - len(self.chunks[0]) >= self.cap:
            self.kept -= len(self.chunks.popleft())

    def since(self, offset: int) -> tuple[str, int]:
        """(text written after `offset`, bytes dropped before it could be read)."""
        start = self.total - self.kept
        dropped = max(0, start - offset)
        data = b"".join(self.chunks)[max(0, offset - start) :]
        return data.decode("utf-8", errors="replace"), dropped


@dataclass
class BackgroundCommand:
    id: str
    command: str
    started: float
    process: asyncio.subprocess.Process
    output: _Ring
    read_offset: int = 0
    exit_code: int | None = None
    killed: bool = False
    reported: bool = False  # the model was told it ended
    end_told: bool = False  # the listener heard "exited" or "killed"
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    @property
    def state(self) -> str:
        if self.process.returncode is None:
            return "running"
        return "killed" if self.killed else "exited"

    def running_for(self) -> float:
        return time.monotonic() - self.started


class BackgroundCommands:
    """The background commands of one session (one per session's tool set)."""

    def __init__(self, *, limit: int = DEFAULT_LIMIT, buffer_bytes: int = DEFAULT_BUFFER_BYTES):
        self.limit = limit
        self.buffer_bytes = buffer_bytes
        self.commands: dict[str, BackgroundCommand] = {}
        # told of each change: (command, "started" | "output_ended" | "exited" | "killed")
        self.listener: Callable[[BackgroundCommand, str], None] | None = None
        self._next = 1
        self._closed = False

    def _tell(self, job: BackgroundCommand, change: str) -> None:
        if self.listener is not None:
            try:
                self.listener(job, change)
            except Exception:  # a face's bug never stops the command's bookkeeping
                log.exception("the background commands' listener failed")

    def running(self) -> list[BackgroundCommand]:
        return [c for c in self.commands.values() if c.state == "running"]

    async def start(
        self,
        command: str,
        argv: Sequence[str],
        *,
        cwd: Path,
        launcher: CommandLauncher | None,
        extra_env: Mapping[str, str | None] | None = None,
        pass_env: Sequence[str] = (),
    ) -> BackgroundCommand:
        if self._closed:
            raise ToolError("the session is ending; no new background command can start")
        if len(self.running()) >= self.limit:
            ids = ", ".join(c.id for c in self.running())
            raise ToolError(
                f"{self.limit} background commands are running already ({ids}), the most "
                "a session may run ([shell] max_background); end one with shell_kill first"
            )
        launch = await _launch_off_loop(argv, cwd, launcher)
        try:
            process = await asyncio.create_subprocess_exec(
                *launch.argv,
                cwd=cwd,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
                env=tool_env(extra_env, pass_env),
                pass_fds=launch.fds,
                preexec_fn=_dies_with_loom(),
            )
        except BaseException:
            launch.finish()
            raise
        finally:
            for fd in launch.fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
        job = BackgroundCommand(
            f"b{self._next}", command, time.monotonic(), process, _Ring(self.buffer_bytes)
        )
        self._next += 1
        self.commands[job.id] = job
        job.tasks.append(asyncio.ensure_future(self._pump(job)))
        job.tasks.append(asyncio.ensure_future(self._wait(job, launch.finish)))
        self._tell(job, "started")
        return job

    async def _pump(self, job: BackgroundCommand) -> None:
        stream = job.process.stdout
        assert stream is not None
        while chunk := await stream.read(65536):
            job.output.add(chunk)
            job.changed.set()
        self._tell(job, "output_ended")

    async def _wait(self, job: BackgroundCommand, finish: object) -> None:
        job.exit_code = await job.process.wait()
        _signal_group(job.process.pid, signal.SIGKILL)  # its leftovers too
        with contextlib.suppress(Exception):
            if callable(finish):
                await asyncio.to_thread(finish)
        job.changed.set()
        job.end_told = True
        self._tell(job, job.state)

    def get(self, command_id: str) -> BackgroundCommand:
        job = self.commands.get(command_id.strip())
        if job is None:
            known = ", ".join(self.commands) or "none"
            raise ToolError(f"no background command {command_id!r} (this session's: {known})")
        return job

    async def read(self, command_id: str, *, pattern: str | None = None, wait: float = 0) -> str:
        """What `command_id` printed since the last read (lines matching `pattern` only,
        when given), waiting up to `wait` seconds for new output; then its state."""
        job = self.get(command_id)
        regex = None
        if pattern:
            try:
                regex = re.compile(pattern)
            except re.error as exc:
                raise ToolError(f"the filter {pattern!r} is not a valid regex: {exc}") from exc
        if wait > 0 and job.state == "running" and job.output.total == job.read_offset:
            job.changed.clear()
            with contextlib.suppress(TimeoutError):
                await within(job.changed.wait(), min(wait, MAX_WAIT_S))
        text, dropped = job.output.since(job.read_offset)
        job.read_offset = job.output.total
        if regex is not None:
            text = "\n".join(line for line in text.splitlines() if regex.search(line))
        parts = []
        if dropped:
            parts.append(f"[... {dropped:,} bytes of older output dropped ...]")
        parts.append(text.rstrip("\n") or "(no new output)")
        parts.append(describe(job))
        if job.state != "running":
            job.reported = True
        return "\n".join(parts)

    async def kill(self, command_id: str) -> str:
        job = self.get(command_id)
        if job.state == "running":
            job.killed = True
            await _stop_group(job.process)
        _signal_group(job.process.pid, signal.SIGKILL)
        return describe(job)

    def ended_unread(self) -> list[str]:
        """One line per command that ended and the model was not told yet (kept until it
        is: `take_finished` or a read of its output)."""
        return [
            describe(job)
            for job in self.commands.values()
            if job.state != "running" and not job.reported
        ]

    def take_finished(self) -> list[str]:
        """One line per command that ended since the model was last told (once each)."""
        lines = []
        for job in self.commands.values():
            if job.state != "running" and not job.reported:
                job.reported = True
                lines.append(describe(job))
        return lines

    async def close(self) -> None:
        """End every command (the session is closing): the whole process group of each."""
        self._closed = True
        for job in list(self.commands.values()):
            if job.state == "running":
                job.killed = True
                with contextlib.suppress(ProcessLookupError):
                    await _stop_group(job.process)
            _signal_group(job.process.pid, signal.SIGKILL)
            for task in job.tasks:
                task.cancel()
            await asyncio.gather(*job.tasks, return_exceptions=True)
            if job.killed and not job.end_told:  # its waiter was cancelled before it could say
                job.end_told = True
                self._tell(job, "killed")


async def _launch_off_loop(
    argv: Sequence[str], cwd: Path, launcher: CommandLauncher | None
) -> Launch:
    """`start_launch` on a worker thread: the sandbox's preparation (its seccomp table, the
    temp mounts, the first walk of the project) took 20-50 ms of the loop per command when
    an answer started many. A cancelled start closes the descriptors it made."""
    task = asyncio.ensure_future(asyncio.to_thread(start_launch, argv, cwd, launcher))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        task.add_done_callback(_discard_launch)
        raise


def _discard_launch(task: asyncio.Future[Launch]) -> None:
    if task.cancelled() or task.exception() is not None:
        return
    for fd in task.result().fds:
        with contextlib.suppress(OSError):
            os.close(fd)


_PR_SET_PDEATHSIG = 1


def _dies_with_loom() -> Callable[[], None] | None:
    """Linux: run in the child before exec, so the command (the sandbox's bwrap, which
    takes its namespace along) gets SIGKILL when Loom dies without cleaning up (SIGKILL,
    a crash). Set before exec, it closes the window in which bwrap has not armed its own
    --die-with-parent yet; a Loom already gone by then ends the child at once."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before the fork
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def arm() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:
            os._exit(1)

    return arm


def describe(job: BackgroundCommand) -> str:
    """`[b1 running for 12 s: npm run dev]`, `[b1 exited with code 0 ...]`."""
    seconds = int(job.running_for())
    if job.state == "running":
        return f"[{job.id} running for {seconds} s: {job.command}]"
    if job.killed:
        return f"[{job.id} killed: {job.command}]"
    return f"[{job.id} exited with code {job.exit_code}: {job.command}]"
