"""`loom list` / `loom search` / the first index: two source trees, interleaved in one run.

    .venv/bin/python bench/threads_ab.py --before /tmp/base/src --after src \\
        --corpus /tmp/loom-bench [--runs 15] [--first-index 2]

On a shared machine the load changes from minute to minute; running the two trees one
after the other (bench/threads_bench.py twice) compares the load as much as the code.
Here every round runs each command once with each tree, alternating which goes first,
and the medians are printed side by side with their ratio. Each tree gets its own copy
of the corpus (its own loom.db). `--first-index N` also times N first indexes of the
whole corpus per tree (loom.db deleted before each), interleaved the same way.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

PYTHON = sys.executable


def _env(src: Path, home: Path) -> dict[str, str]:
    env = {**os.environ, "LOOM_HOME": str(home), "PYTHONPATH": str(src)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _once(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(
        [PYTHON, "-m", "loom", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )
    return time.perf_counter() - started


def _drop_index(home: Path) -> None:
    for name in ("loom.db", "loom.db-wal", "loom.db-shm", "loom.db.schema.json"):
        (home / "data" / name).unlink(missing_ok=True)


def _home(corpus: Path, where: Path) -> Path:
    if not (where / "data" / "threads").exists():
        (where / "data").mkdir(parents=True, exist_ok=True)
        shutil.copytree(corpus / "data" / "threads", where / "data" / "threads")
    return where


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="src/ of the old tree")
    parser.add_argument("--after", type=Path, required=True, help="src/ of the new tree")
    parser.add_argument("--corpus", type=Path, default=Path("/tmp/loom-bench"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/loom-bench-ab"))
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--first-index", type=int, default=0)
    args = parser.parse_args()
    meta = json.loads((args.corpus / "corpus.json").read_text())
    trees = {
        "before": (args.before.resolve(), _home(args.corpus, args.work / "before")),
        "after": (args.after.resolve(), _home(args.corpus, args.work / "after")),
    }
    envs = {name: _env(src, home) for name, (src, home) in trees.items()}
    print(f"corpus: {meta['threads']} threads x {meta['messages']} messages")

    firsts: dict[str, list[float]] = {name: [] for name in trees}
    for round_ in range(args.first_index):
        for name in ("before", "after") if round_ % 2 == 0 else ("after", "before"):
            _drop_index(trees[name][1])
            firsts[name].append(_once(["list"], envs[name]))
    for name in trees:  # an index to query (and warm caches)
        _once(["list"], envs[name])
        _once(["search", "warm-up"], envs[name])

    commands = {
        "loom list": ["list"],
        "loom search (rare word)": ["search", meta["rare_word"]],
        "loom search (common word)": ["search", "parser"],
        "loom search (branch)": ["search", "feature/auth-12"],
    }
    times: dict[tuple[str, str], list[float]] = {}
    for round_ in range(args.runs):
        order = ("before", "after") if round_ % 2 == 0 else ("after", "before")
        for label, command in commands.items():
            for name in order:
                times.setdefault((label, name), []).append(_once(command, envs[name]))
    print(f"medians of {args.runs} interleaved runs per tree\n")
    print(f"{'':<30} {'before':>10} {'after':>10} {'after/before':>13}")
    rows = [(label, times[(label, "before")], times[(label, "after")]) for label in commands]
    if args.first_index:
        rows.insert(0, ("first index (whole corpus)", firsts["before"], firsts["after"]))
    for label, before, after in rows:
        b, a = statistics.median(before), statistics.median(after)
        unit, scale = ("s", 1) if b > 5 else ("ms", 1000)
        print(f"{label:<30} {b * scale:8.1f}{unit:>2} {a * scale:8.1f}{unit:>2} {a / b:12.2f}x")


if __name__ == "__main__":
    main()
