"""What does the sandbox cost per agent command?

Runs `true` through the shell tool's own launch path (`loom.tools._process.run_process`,
`bash -c true`) N times unconfined and N times under the sandbox (bubblewrap on Linux),
alternating them so all see the same machine load, and prints the medians, the
difference and the ratio. The project is a git repository with `--files` files (the
sweep after each command walks it), and Loom's own folders are hidden as in a session.
Variants: everything (limits: a cgroup per command and prlimit; hidden Loom folders;
read-only .git; the sweep), without the limits, and with the network on (no network
namespace, no seccomp filter). Then the sweep alone on bigger trees, and the one-off
cost of detecting the sandbox.

    .venv/bin/python bench/sandbox_overhead.py [--runs 200] [--files 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from loom.sandbox import Sandbox, build_policy, detect  # noqa: E402
from loom.sandbox.limits import Limits  # noqa: E402
from loom.sandbox.sweep import Sweeper, started, sweep  # noqa: E402
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


def make_tree(root: Path, files: int) -> None:
    """`files` small files, 20 to a folder, three levels deep, plus a git repository."""
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for index in range(files):
        folder = root / f"d{index // 400}" / f"e{index // 20 % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{index}.py").write_text("x = 1\n")


def sweep_cost(files: int, repeats: int = 15) -> tuple[float, float]:
    """(a whole walk, a session's later sweep that remembers the tree), medians."""
    with tempfile.TemporaryDirectory(prefix="loom-bench-sweep-") as folder:
        root = Path(folder)
        make_tree(root, files)
        walks, remembered = [], []
        sweeper = Sweeper(root)
        sweeper.sweep(started(), None)
        time.sleep(0.1)  # ctimes older than a clock tick: trusted from here on
        sweeper.sweep(started(), None)
        for _ in range(repeats):
            begin = time.perf_counter()
            sweep(root, started(), None)
            walks.append(time.perf_counter() - begin)
            begin = time.perf_counter()
            sweeper.sweep(started(), None)
            remembered.append(time.perf_counter() - begin)
        return statistics.median(walks), statistics.median(remembered)


async def main(runs: int, files: int) -> None:
    begin = time.perf_counter()
    detection = detect()  # once per process, on a worker thread during session start
    detect_ms = (time.perf_counter() - begin) * 1000
    if detection.backend is None:
        raise SystemExit(f"no sandbox on this machine: {detection.problem}")
    with tempfile.TemporaryDirectory(prefix="loom-bench-sandbox-") as folder:
        project = Path(folder) / "proj"
        make_tree(project, files)
        home = Path(folder) / "loomhome"
        loom_dirs = tuple((home / name, name) for name in ("data", "state", "cache", "config"))
        sandboxes = {
            "sandboxed (all)": Sandbox(build_policy(project, loom_dirs=loom_dirs)),
            "sandboxed, no limits": Sandbox(
                build_policy(project, loom_dirs=loom_dirs, limits=Limits(None, None, None))
            ),
            "sandboxed, network on": Sandbox(
                build_policy(project, network=True, loom_dirs=loom_dirs)
            ),
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
    backend = sandboxes["sandboxed (all)"].backend
    assert backend is not None  # every sandbox here is active (checked above)
    print(
        f"`bash -c true` via run_process, {runs} runs each, interleaved ({backend.name}); "
        f"project: git repository with {files} files"
    )
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
    print("the sweep after each command alone (median of 15): first of a session / later")
    for size in (1_000, 10_000, 50_000):
        walk, later = sweep_cost(size)
        print(f"  {size:>6} files: {walk * 1000:7.2f} ms / {later * 1000:7.2f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--files", type=int, default=2000)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.runs, arguments.files))
