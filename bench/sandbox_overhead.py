"""What does the sandbox cost per agent command?

Runs `true` through the shell tool's own launch path (`loom.tools._process.run_process`,
`bash -c true`) N times unconfined and N times under the sandbox (bubblewrap on Linux),
alternating them so all see the same machine load, and prints the medians, the
difference and the ratio. Also the network-on variant (no network namespace to make,
no seccomp filter), and the one-off cost of detecting the sandbox.

    .venv/bin/python bench/sandbox_overhead.py [--runs 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from loom.sandbox import Sandbox, build_policy, detect  # noqa: E402
from loom.tools._launcher import CommandLauncher  # noqa: E402
from loom.tools._process import run_process  # noqa: E402

ARGV = ["/bin/bash", "-c", "true"]


async def once(project: Path, launcher: CommandLauncher | None) -> float:
    started = time.perf_counter()
    outcome = await run_process(
        ARGV, cwd=project, timeout=30, max_output_bytes=10_000, launcher=launcher
    )
    elapsed = time.perf_counter() - started
    if outcome.exit_code != 0:
        raise SystemExit(f"`true` failed ({outcome.exit_code}): {outcome.output}")
    return elapsed


async def main(runs: int) -> None:
    started = time.perf_counter()
    detection = detect()  # once per process, on a worker thread during session start
    detect_ms = (time.perf_counter() - started) * 1000
    if detection.backend is None:
        raise SystemExit(f"no sandbox on this machine: {detection.problem}")
    with tempfile.TemporaryDirectory(prefix="loom-bench-sandbox-") as folder:
        project = Path(folder)
        sandboxes = {
            "sandboxed, network off": Sandbox(build_policy(project)),
            "sandboxed, network on": Sandbox(build_policy(project, network=True)),
        }
        for sandbox in sandboxes.values():
            if not sandbox.active:
                raise SystemExit(f"no sandbox on this machine: {sandbox.problem}")
            await once(project, sandbox)  # warm-up
        await once(project, None)
        times: dict[str, list[float]] = {"unconfined": [], **{name: [] for name in sandboxes}}
        for _ in range(runs):
            times["unconfined"].append(await once(project, None))
            for name, sandbox in sandboxes.items():
                times[name].append(await once(project, sandbox))
    backend = sandboxes["sandboxed, network off"].backend
    print(f"`bash -c true` via run_process, {runs} runs each, interleaved ({backend.name})")
    base = statistics.median(times["unconfined"])
    for name, samples in times.items():
        median = statistics.median(samples)
        extra = (
            ""
            if name == "unconfined"
            else (f"  (+{(median - base) * 1000:.2f} ms, x{median / base:.2f})")
        )
        print(f"  {name:24} median {median * 1000:7.2f} ms{extra}")
    print(f"  detecting the sandbox (once per process): {detect_ms:.1f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    asyncio.run(main(parser.parse_args().runs))
