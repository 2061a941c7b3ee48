"""Bench: 20 background commands (loom.tools.background) each printing 10 MB at once.

Prints the event loop's lag (a 1 ms ticker's overshoot: max, median, p99) while they run,
and Loom's resident memory before and after (each command's output is a bounded ring, so
memory should grow by about 20 x the ring, not 200 MB). Two parts:

  registry   the commands alone, unsandboxed (launcher None): the reading side only
  session    a real session (Workspace, its shell tool, the sandbox as configured) whose
             model (the scripted provider) starts the 20 commands with `shell
             {background: true}` and then streams a long answer (3,000 deltas, 2 ms
             apart) while they print: the turn's events and the commands' output share
             the loop

Target (issue 36): memory bounded, loop lag under 50 ms.
Run: .venv/bin/python bench/background_output.py [--part registry|session|both]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from loom.tools.background import DEFAULT_BUFFER_BYTES, BackgroundCommands

COMMANDS = 20
BYTES = 10 * 1024 * 1024


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


STALL_S = 0.02  # a tick this late is a stall (kept with its time, for --sample)


async def ticker(
    stop: asyncio.Event, lags: list[float], stalls: list[tuple[float, float]] | None = None
) -> None:
    while not stop.is_set():
        before = time.perf_counter()
        await asyncio.sleep(0.001)
        after = time.perf_counter()
        lags.append(after - before - 0.001)
        if stalls is not None and after - before > STALL_S:
            stalls.append((before, after))


def lag_line(lags: list[float]) -> str:
    ordered = sorted(lags)
    p99 = ordered[int(len(ordered) * 0.99)]
    return (
        f"loop lag: max {max(lags) * 1000:.1f} ms, median {statistics.median(lags) * 1000:.2f}"
        f" ms, p99 {p99 * 1000:.1f} ms ({len(lags)} ticks)"
    )


async def registry_part() -> None:
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
        f"[registry] {COMMANDS} commands x {BYTES / 1e6:.1f} MB: read {total / 1e6:.0f} MB in "
        f"{elapsed:.2f} s"
    )
    print(f"[registry] {lag_line(lags)}")
    print(f"[registry] RSS {before:.0f} MB -> {after:.0f} MB "
          f"(ring {DEFAULT_BUFFER_BYTES / 1e6:.1f} MB each)")  # fmt: skip


DELTAS, DELTA_GAP_S = 3000, 0.002


async def session_part(sample: bool) -> None:
    from loom.config import load_config
    from loom.core.messages import ToolCall
    from loom.llm.scripted import ScriptedProvider, ScriptedTurn
    from loom.session import SessionSpec, Workspace

    root = Path(tempfile.mkdtemp())
    os.environ.setdefault("LOOM_HOME", tempfile.mkdtemp())
    command = f"yes 0123456789abcdef | head -c {BYTES}"
    arguments = {"command": command, "background": True}
    calls = [
        ToolCall(id=f"c{n}", tool_name="shell", arguments_json=arguments) for n in range(COMMANDS)
    ]
    answer = "".join(f"word{n:04d} " for n in range(DELTAS))  # 9 characters a delta
    provider = ScriptedProvider([
        ScriptedTurn(tool_calls=calls),
        ScriptedTurn(text=answer, chunk_size=9, chunk_delay=DELTA_GAP_S),
    ])  # fmt: skip
    config = load_config(root, {"shell.max_background": COMMANDS}, project_root=root)
    ws = Workspace(config, provider_factory=lambda _m: provider,
                   session_options={"git_snapshot": False, "repo_map_tokens": 0})  # fmt: skip
    session = await ws.start_session(SessionSpec(auto_approve=True))
    deltas = 0

    def count(event: object) -> None:
        nonlocal deltas
        deltas += getattr(event, "type", "") == "text_delta"

    unsubscribe = session.subscribe(count)
    sampler = None
    if sample:
        import sys

        sys.path.insert(0, str(Path(__file__).parent))
        from _loop_sampler import LoopSampler

        sampler = LoopSampler()
        sampler.start()
    before = rss_mb()
    stop, lags, stalls = asyncio.Event(), [], []
    tick = asyncio.ensure_future(ticker(stop, lags, stalls))
    started = time.perf_counter()
    turn = asyncio.ensure_future(session.send_message("start them and tell me a story"))
    jobs = []
    while len(jobs) < COMMANDS and not turn.done():
        jobs = session.background_commands()
        await asyncio.sleep(0.01)
    all_started = len(lags)  # the ticks after this: the commands print, the turn streams
    text = await turn
    streamed_at = time.perf_counter() - started
    shell: Any = session.tools.get("shell")
    registry = shell.background  # bench only: the output totals
    await asyncio.gather(*(job.process.wait() for job in registry.commands.values()))
    await asyncio.sleep(0.2)
    ended_at = time.perf_counter() - started
    stop.set()
    await tick
    after = rss_mb()
    total = sum(job.output.total for job in registry.commands.values())
    unsubscribe()
    await ws.shutdown()
    launcher = getattr(session.tools.get("shell"), "launcher", None)
    sandboxed = "sandboxed" if getattr(launcher, "active", False) else "not sandboxed"
    print(
        f"[session] {COMMANDS} commands x {BYTES / 1e6:.1f} MB ({sandboxed}): read "
        f"{total / 1e6:.0f} MB, all ended at {ended_at:.2f} s; the turn streamed {deltas} "
        f"deltas ({len(text)} characters) and ended at {streamed_at:.2f} s"
    )
    print(f"[session] whole run: {lag_line(lags)}")
    print(f"[session] starting the 20: {lag_line(lags[:all_started])}")
    print(f"[session] printing while the turn streams: {lag_line(lags[all_started:])}")
    print(f"[session] RSS {before:.0f} MB -> {after:.0f} MB")
    if sampler is not None:
        sampler.report(stalls, top=5)


async def main(part: str, sample: bool) -> None:
    if part in ("registry", "both"):
        await registry_part()
    if part in ("session", "both"):
        await session_part(sample)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--part", choices=["registry", "session", "both"], default="both")
    parser.add_argument("--sample", action="store_true", help="what held the loop in stalls")
    args = parser.parse_args()
    asyncio.run(main(args.part, args.sample))
