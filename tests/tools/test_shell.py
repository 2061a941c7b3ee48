from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import psutil
import pytest

from loom.tools.base import ToolContext
from loom.tools.shell import Shell
from tests.support.tools import Runner


def _gone(pid: int) -> bool:
    """True once the process is dead (a signal takes a moment to be delivered)."""
    for _ in range(500):
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.01)
    return False


async def _wait_for_file(path: Path) -> str:
    while not path.exists() or not path.read_text().strip():
        await asyncio.sleep(0.02)
    return path.read_text().strip()


async def test_runs_in_project_root_with_exit_code(run: Runner, root: Path) -> None:
    result = await run("shell", command="pwd; echo oops >&2; exit 3")
    lines = result.content.splitlines()
    assert Path(lines[0]).resolve() == root.resolve()
    assert "oops" in lines
    assert lines[-1] == "[exit code 3]"
    assert result.is_error and result.metadata["exit_code"] == 3
    ok = await run("shell", command="true")
    assert ok.content == "(no output)\n[exit code 0]" and not ok.is_error


async def test_reports_progress(run: Runner) -> None:
    await run("shell", command="echo hi")
    assert run.progress and run.progress[0][1] == "running echo hi"


async def test_output_keeps_head_and_tail(root: Path) -> None:
    tool = Shell(root, max_output_bytes=1000)
    command = f"{sys.executable} -c \"print('A' * 50000); print('B' * 50000)\""
    result = await tool.run({"command": command}, ToolContext(root))
    head, _, tail = result.content.partition("bytes of output omitted")
    assert head.startswith("A" * 500)
    assert "[... 99,0" in head
    assert tail.endswith("B" * 100 + "\n[exit code 0]")
    assert "B" * 400 in tail
    assert result.metadata["output_bytes"] == 100_002
    assert len(result.content) < 1200


async def test_timeout_kills_the_whole_process_group(run: Runner, root: Path) -> None:
    result = await run("shell", command="sleep 300 & echo $! > child.pid; sleep 300", timeout=1)
    assert "[timed out after 1 s" in result.content
    assert result.metadata["timed_out"] is True and result.is_error
    assert _gone(int((root / "child.pid").read_text()))


async def test_background_children_do_not_outlive_the_call(run: Runner, root: Path) -> None:
    result = await run("shell", command="sleep 300 & echo $! > bg.pid; echo started")
    assert result.content.startswith("started") and "[exit code 0]" in result.content
    assert _gone(int((root / "bg.pid").read_text()))


async def test_cancel_kills_the_process_group(run: Runner, root: Path) -> None:
    task = asyncio.create_task(run("shell", command="sleep 300 & echo $! > c.pid; sleep 300"))
    pid = int(await asyncio.wait_for(_wait_for_file(root / "c.pid"), 30))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _gone(pid)


async def test_killed_by_signal_is_reported(run: Runner) -> None:
    result = await run("shell", command="kill -9 $$")
    assert result.content.endswith("[killed by SIGKILL]")


async def test_no_stdin(run: Runner) -> None:
    result = await run("shell", command="cat")  # would hang forever with a terminal
    assert result.content == "(no output)\n[exit code 0]"
