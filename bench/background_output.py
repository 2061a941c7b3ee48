"""Bench: 20 background commands (loom.tools.background) each printing 10 MB at once.

Prints the event loop's worst lag (a 1 ms ticker's overshoot) while they run, and
Loom's resident memory before and after (each command's output is a bounded ring, so
memory should grow by about 20 x the ring, not 200 MB). Unsandboxed (launcher None): what
is measured is the reading side. Run: .venv/bin/python bench/background_output.py
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from loom.tools.background import DEFAULT_BUFFER_BYTES, BackgroundCommands

COMMANDS = 20
BYTES = 10 * 1024 * 1024


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def ticker(stop: asyncio.Event, lags: list[float]) -> None:
    while not stop.is_set():
        before = time.perf_counter()
        await asyncio.sleep(0.001)
        lags.append(time.perf_counter() - before - 0.001)


async def main() -> None:
    registry = BackgroundCommands(limit=COMMANDS)
    root = Path(tempfile.mkdtemp())
    before = rss_mb()
    stop, lags = asyncio.Event(), []
    tick = asyncio.ensure_future(ticker(stop, lags))
    started = time.perf_counter()
    command = f"yes 0123456789abcdef | head -c {BYTES}"
    jobs = [
        await registry.start(command, ["/bin/sh", "-c", command], cwd=root, launcher=None)
        for _ in range(COMMANDS)
    ]
    await asyncio.gather(*(job.process.wait() for job in jobs))
    await asyncio.sleep(0.2)  # the last chunks
    elapsed = time.perf_counter() - started
    stop.set()
    await tick
    total = sum(job.output.total for job in jobs)
    after = rss_mb()
    await registry.close()
    print(
        f"{COMMANDS} commands x {BYTES / 1e6:.1f} MB: read {total / 1e6:.0f} MB in {elapsed:.2f} s"
    )
    p99 = sorted(lags)[int(len(lags) * 0.99)]
    print(f"loop lag: max {max(lags) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms")
    print(f"RSS {before:.0f} MB -> {after:.0f} MB (ring {DEFAULT_BUFFER_BYTES / 1e6:.1f} MB each)")


if __name__ == "__main__":
    asyncio.run(main())
