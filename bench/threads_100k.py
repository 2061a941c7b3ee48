"""The thread index at 100,000 threads: the first index, `loom list`, `loom list` after a session.

    .venv/bin/python bench/threads_100k.py [--home /tmp/loom-100k] [--runs 7]
        [--before /tmp/before] [--skip-first-index]

The corpus (--threads thread files of 50 messages, bench/gen_threads_corpus.py) is
generated once into --home and reused by later runs (it takes ~15 min and ~1.7 GB).
For each source tree (this checkout, and --before if given), whole processes:

1. First index: loom.db removed, then `loom list` (stdout to a pipe, so the progress is
   its plain "indexing N thread files" line on stderr), then the first `loom search`
   (which writes the message rows a big first index leaves for later,
   loom.store.index_messages). Prints the times, whether progress was shown, and
   loom.db's size (with its WAL, after the search) beside the thread files' size.
   Baseline in the same run: a process that reads and parses every thread file (orjson)
   and nothing else, the least an index built from the files can cost.
2. `loom list`, warm: median of --runs; baseline `python -c pass` interleaved.
3. `loom list` right after a session: a separate process appends a message to a thread
   through LocalThreadStore (what a session's save does) and exits; then `loom list`.
   Median of --runs; the warm list of 2. is its baseline.

Besides wall time, each figure has the CPU time (user + system) of its process: on a
shared machine wall time follows the load average, printed beside each figure.
Targets (issue 25): first index <= 30 s with progress, loom.db no larger than the thread
files; `loom list` after a session <= 0.1 s, as fast as any other.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable

READ_ALL = """
import os, sys, orjson
d = sys.argv[1]
n = 0
for name in os.listdir(d):
    if name.startswith("T-") and name.endswith(".json"):
        with open(os.path.join(d, name), "rb") as f:
            orjson.loads(f.read())
        n += 1
print(n)
"""

SAVE_ONE = """
import sys
from loom.core.messages import UserMessage
from loom.store.local import LocalThreadStore
store = LocalThreadStore()
thread = store.load(store.list(1)[0].id)
thread.append(UserMessage(content="one more note from a session " + sys.argv[1]))
thread.touch()
store.save(thread)
store.close()
"""


RARE_WORD = "lokado"  # bench/gen_threads_corpus.py's rare word


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds, stderr) of one whole process."""
    cpu = child_cpu()
    started = time.perf_counter()
    out = subprocess.run(
        cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True
    )
    return time.perf_counter() - started, child_cpu() - cpu, out.stderr


def tree_env(src: Path, home: Path) -> dict[str, str]:
    env = {**os.environ, "LOOM_HOME": str(home), "PYTHONPATH": str(src)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed Loom has its bytecode cached
    return env


def size_of(folder: Path, prefix: str = "") -> int:
    return sum(e.stat().st_size for e in os.scandir(folder) if e.name.startswith(prefix))


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def first_index(src: Path, home: Path, threads: Path) -> None:
    env = tree_env(src, home)
    data = home / "data"
    for name in os.listdir(data):
        if name.startswith("loom.db"):
            (data / name).unlink()
    wall, cpu, err = run([PYTHON, "-m", "loom", "list", "-n", "1"], env)
    shown = "progress shown" if "index" in err.lower() else "NO progress line"
    print(f"  first index: {wall:6.1f} s wall, {cpu:6.1f} s CPU ({load()}); {shown}")
    # A big first index may leave the message rows to the first search: its cost.
    search_wall, search_cpu, err = run([PYTHON, "-m", "loom", "search", RARE_WORD], env)
    shown = "progress shown" if "index" in err.lower() else "no progress line"
    print(
        f"  first search: {search_wall:6.1f} s wall, {search_cpu:6.1f} s CPU ({load()}); "
        f"{shown}; first index + first search {wall + search_wall:6.1f} s wall, "
        f"{cpu + search_cpu:6.1f} s CPU"
    )
    base_wall, base_cpu, _ = run([PYTHON, "-c", READ_ALL, str(threads)], env)
    db = size_of(data, "loom.db")
    files = size_of(threads, "T-")
    print(
        f"    baseline read+parse every file: {base_wall:6.1f} s wall, {base_cpu:6.1f} s CPU;"
        f" ratio {wall / base_wall:.2f}x wall, {cpu / base_cpu:.2f}x CPU; target <= 30 s"
    )
    print(
        f"    loom.db {db / 1e6:,.0f} MB vs thread files {files / 1e6:,.0f} MB: "
        f"{db / files:.2f}x (target <= 1x)"
    )


def lists(src: Path, home: Path, runs: int) -> None:
    env = tree_env(src, home)
    listing = [PYTHON, "-m", "loom", "list"]
    run(listing, env)  # warm the page cache and the bytecode
    warm, warm_cpu, bare, bare_cpu, after, after_cpu = [], [], [], [], [], []
    for i in range(runs):  # interleaved: load from other work falls on all alike
        wall, cpu, _ = run(listing, env)
        warm.append(wall)
        warm_cpu.append(cpu)
        wall, cpu, _ = run([PYTHON, "-c", "pass"], env)
        bare.append(wall)
        bare_cpu.append(cpu)
        run([PYTHON, "-c", SAVE_ONE, str(i)], env)
        wall, cpu, _ = run(listing, env)
        after.append(wall)
        after_cpu.append(cpu)

    def ms(values: list[float]) -> float:
        return statistics.median(values) * 1000

    print(
        f"  loom list (warm), median of {runs}: {ms(warm):6.0f} ms wall, {ms(warm_cpu):5.0f}"
        f" ms CPU ({load()}); python -c pass {ms(bare):5.0f} ms wall, {ms(bare_cpu):4.0f} ms"
        f" CPU"
    )
    print(
        f"  loom list after a session's save: {ms(after):6.0f} ms wall, {ms(after_cpu):5.0f} ms"
        f" CPU; x warm list {ms(after) / ms(warm):.2f} wall, "
        f"{ms(after_cpu) / ms(warm_cpu):.2f} CPU; target <= 100 ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--home", type=Path, default=Path("/tmp/loom-100k"))
    parser.add_argument("--threads", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--before", type=Path)
    parser.add_argument("--skip-first-index", action="store_true")
    args = parser.parse_args()
    if not (args.home / "corpus.json").exists():
        sys.path.insert(0, str(ROOT / "bench"))
        from gen_threads_corpus import generate

        generate(args.home, args.threads, 50)
    threads = args.home / "data" / "threads"
    trees = [("after", ROOT / "src")]
    if args.before is not None:
        src = args.before / "src" if (args.before / "src").is_dir() else args.before
        trees.insert(0, ("before", src))
    count = sum(1 for name in os.listdir(threads) if name.startswith("T-"))
    print(f"{count} thread files in {threads}; {os.cpu_count()} cores, {load()}")
    for label, src in trees:
        home = args.home
        if len(trees) > 1:  # each tree its own loom.db; the thread files are shared
            home = args.home.parent / f"{args.home.name}-{label}"
            (home / "data").mkdir(parents=True, exist_ok=True)
            link = home / "data" / "threads"
            if not link.exists():
                shutil.copytree(threads, link, copy_function=os.link)  # hard links: no copy
        print(f"{label} ({src}):")
        if not args.skip_first_index:
            first_index(src, home, home / "data" / "threads")
        lists(src, home, args.runs)


if __name__ == "__main__":
    main()
