"""The shell tool's process handling still holds under the sandbox: a timeout or a
cancel stops everything the command started (in its PID namespace too), background
children do not outlive the call, and signal deaths are reported."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import psutil
import pytest

from loom.sandbox import Sandbox, build_policy
from loom.tools.base import ToolContext, ToolResult
from loom.tools.shell import Shell
from tests.support.sandbox import require_sandbox


def _sleepers(token: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        cmdline = process.info["cmdline"] or []
        if token in cmdline and process.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(process)
    return found


def _all_gone(token: str) -> bool:
    for _ in range(500):
        if not _sleepers(token):
            return True
        time.sleep(0.01)
    return False


async def _run(root: Path, command: str, timeout: float | None = None) -> ToolResult:
    require_sandbox()
    shell = Shell(root, launcher=Sandbox(build_policy(root)))
    args: dict[str, object] = {"command": command}
    if timeout is not None:
        args["timeout"] = timeout
    return await shell.run(args, ToolContext(project_root=root))


async def test_timeout_stops_every_process_in_the_sandbox(tmp_path: Path) -> None:
    result = await _run(tmp_path, "sleep 301.25 & sleep 301.25", timeout=1)
    assert "[timed out after 1 s" in result.content and result.is_error
    assert result.metadata["sandboxed"] is True
    assert _all_gone("301.25")


async def test_background_children_do_not_outlive_the_call(tmp_path: Path) -> None:
    result = await _run(tmp_path, "sleep 302.25 & echo started")
    assert result.content == "started\n[exit code 0]"
    assert _all_gone("302.25")


async def test_cancel_stops_every_process_in_the_sandbox(tmp_path: Path) -> None:
    task = asyncio.create_task(_run(tmp_path, "sleep 303.25 & touch up; sleep 303.25"))
    for _ in range(3000):
        if (tmp_path / "up").exists():
            break
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _all_gone("303.25")


async def test_a_signal_death_shows_as_128_plus_the_signal(tmp_path: Path) -> None:
    # bubblewrap reports a child killed by signal N as exit code 128+N (as a shell does)
    result = await _run(tmp_path, "kill -9 $$")
    assert result.content.endswith("[exit code 137]") and result.is_error
