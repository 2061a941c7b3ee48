"""Running one hook command: JSON on stdin, a timeout, bounded output.

The command runs through `/bin/sh -c` in the session's folder, as the person (hooks are
the person's own configuration, or a trusted project's), in its own process group so a
timeout kills everything it started. The folder is the project, which sandboxed commands
can write, so nothing there is picked up implicitly: Python runs with PYTHONSAFEPATH=1
(`python -m black` never imports a planted `black.py`; a hook script that imports its
neighbours says `PYTHONSAFEPATH= python ...`), and relative PATH entries (`.`, an empty
one) are dropped, so a bare `black` is never `./black`. Each of stdout and stderr keeps
its first `MAX_OUTPUT_BYTES`; the rest is read and dropped, so a hook that prints
megabytes can neither fill a pipe and hang nor fill Loom's memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass
from pathlib import Path

MAX_OUTPUT_BYTES = 64_000
_CHUNK = 1 << 16


@dataclass(frozen=True)
class HookRun:
    command: str
    exit_code: int | None  # None: it did not finish (timeout) or could not start
    stdout: str
    stderr: str
    timed_out: bool = False
    dropped_bytes: int = 0  # output past MAX_OUTPUT_BYTES, read and not kept
    error: str = ""  # why it could not start


async def run_hook(
    command: str,
    payload: bytes,
    *,
    cwd: Path,
    timeout: float,
    env: dict[str, str] | None = None,
) -> HookRun:
    """Run `command` with `payload` on stdin; never raises but for cancellation (then
    the process group is killed)."""
    try:
        process = await asyncio.create_subprocess_exec(
            "/bin/sh", "-c", command,
            cwd=str(cwd), env=hook_environment(env),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, start_new_session=True,
        )  # fmt: skip
    except OSError as exc:
        return HookRun(command, None, "", "", error=f"could not start: {exc}")
    dropped = [0]
    try:
        async with asyncio.timeout(timeout):
            out, err, _ = await asyncio.gather(
                _read_capped(process.stdout, dropped),
                _read_capped(process.stderr, dropped),
                _feed(process, payload),
            )
            code = await process.wait()
    except TimeoutError:
        _kill(process)
        await process.wait()
        return HookRun(command, None, "", "", timed_out=True)
    except BaseException:
        _kill(process)
        with contextlib.suppress(Exception):
            await process.wait()
        raise
    return HookRun(command, code, _text(out), _text(err), dropped_bytes=dropped[0])


def hook_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The person's environment for a hook, without what would find a program or a module
    in the project folder it runs in by accident (see the module doc), plus `extra`."""
    env = {**os.environ, "PYTHONSAFEPATH": "1"}
    path = [entry for entry in env.get("PATH", "").split(os.pathsep) if os.path.isabs(entry)]
    env["PATH"] = os.pathsep.join(path)
    env.update(extra or {})
    return env


async def _feed(process: asyncio.subprocess.Process, payload: bytes) -> None:
    stdin = process.stdin
    if stdin is None:
        return
    # A hook that never reads its stdin (or exits at once) must not fail the run.
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.write(payload)
        await stdin.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.close()


async def _read_capped(stream: asyncio.StreamReader | None, dropped: list[int]) -> bytes:
    if stream is None:
        return b""
    kept = bytearray()
    while chunk := await stream.read(_CHUNK):
        room = MAX_OUTPUT_BYTES - len(kept)
        if room > 0:
            kept += chunk[:room]
        dropped[0] += max(0, len(chunk) - max(room, 0))
    return bytes(kept)


def _kill(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace").strip()
