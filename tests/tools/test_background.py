"""loom.tools.background without a sandbox: the output ring drops old output with a
marker, the limit refuses one more, the model hears of an ended command once, and close
ends every process group."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from loom.tools.background import BackgroundCommands
from loom.tools.base import ToolError

pytestmark = pytest.mark.asyncio


def _gone(pid: int) -> bool:
    """Ended: no such process, or a zombie nobody reaped yet."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
    return "State:\tZ" in status


async def _start(registry: BackgroundCommands, command: str, root: Path):
    return await registry.start(command, ["/bin/sh", "-c", command], cwd=root, launcher=None)


async def test_older_output_is_dropped_with_a_marker(tmp_path: Path) -> None:
    registry = BackgroundCommands(buffer_bytes=1000)
    lines = "for i in $(seq 1 50); do head -c 100 /dev/zero | tr '\\0' x; echo; sleep 0.01; done"
    job = await _start(registry, f"{lines}; echo tail-end", tmp_path)
    await asyncio.wait_for(job.process.wait(), 10)
    await asyncio.sleep(0.2)
    text = await registry.read(job.id, wait=1)
    assert "bytes of older output dropped" in text and "tail-end" in text
    assert len(text) < 1300 and "exited with code 0" in text
    assert (await registry.read(job.id)).startswith("(no new output)")
    await registry.close()


async def test_the_limit_and_the_end_told_once(tmp_path: Path) -> None:
    registry = BackgroundCommands(limit=1)
    first = await _start(registry, "sleep 30", tmp_path)
    with pytest.raises(ToolError, match="1 background commands are running already"):
        await _start(registry, "sleep 30", tmp_path)
    assert "b1 killed" in await registry.kill(first.id)
    assert registry.take_finished() == ["[b1 killed: sleep 30]"]
    assert registry.take_finished() == []
    done = await _start(registry, "exit 3", tmp_path)
    await asyncio.wait_for(done.process.wait(), 10)
    await asyncio.sleep(0.1)
    assert registry.take_finished() == ["[b2 exited with code 3: exit 3]"]
    await registry.close()


async def test_close_ends_the_whole_group(tmp_path: Path) -> None:
    registry = BackgroundCommands()
    job = await _start(registry, "sleep 300 & echo $!; wait", tmp_path)
    text = await registry.read(job.id, wait=5)
    child = int(text.splitlines()[0])
    await registry.close()
    await asyncio.sleep(0.2)
    assert _gone(child)
    with pytest.raises(ToolError, match="the session is ending"):
        await _start(registry, "true", tmp_path)


HOLDER = """
import asyncio, sys
from pathlib import Path
from loom.tools.background import BackgroundCommands

async def main():
    registry = BackgroundCommands()
    command = "exec sleep 3138" + "1"  # so this script's own command line does not name it
    await registry.start("x", ["/bin/sh", "-c", command], cwd=Path("."), launcher=None)
    print("started", flush=True)
    await asyncio.sleep(120)

asyncio.run(main())
"""


async def test_a_command_dies_with_a_killed_loom_even_without_a_sandbox(tmp_path: Path) -> None:
    """SIGKILL leaves Loom no clean-up: the parent-death signal set in the spawn path
    ends the command (its own session, so no terminal signal would reach it)."""
    import signal
    import sys

    from tests.support.processes import alive

    holder = await asyncio.create_subprocess_exec(
        sys.executable, "-c", HOLDER, cwd=tmp_path, stdout=asyncio.subprocess.PIPE
    )
    assert holder.stdout is not None
    assert await asyncio.wait_for(holder.stdout.readline(), 30) == b"started\n"
    assert alive("sleep 31381")
    holder.send_signal(signal.SIGKILL)
    await holder.wait()
    for _ in range(100):
        if not alive("sleep 31381"):
            break
        await asyncio.sleep(0.05)
    assert alive("sleep 31381") == []


async def test_close_tells_the_listener_each_running_command_was_killed(tmp_path: Path) -> None:
    """A session that ends with commands running: every face hears each one was killed
    (the web panel and ACP would otherwise show them running for ever)."""
    registry = BackgroundCommands()
    told: list[tuple[str, str]] = []
    registry.listener = lambda job, change: told.append((job.id, change))
    await _start(registry, "sleep 300", tmp_path)
    done = await _start(registry, "true", tmp_path)
    await registry.read(done.id, wait=5)
    await asyncio.sleep(0.2)
    await registry.close()
    ends = [(cid, change) for cid, change in told if change in ("exited", "killed")]
    assert sorted(ends) == [("b1", "killed"), ("b2", "exited")]
