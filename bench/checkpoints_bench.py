"""Checkpoints on Django's tree (~2,900 Python files): the cost before a tool call.

Uses the Django tree bench/repomap_django.py prepares (bench/.work/, a pip download of the
sdist made a git repo), copied to a scratch folder so the edits never touch it. Prints:
  cold    - the first snapshot (hashes every file into a new store)
  warm    - a snapshot after a one-line edit (the cost before each file-changing tool)
  store   - the store's size after 100 snapshots of one small edit each
  undo    - restoring the checkpoint taken before those 100 edits
  baseline: `git status --porcelain` on the same tree, same run (git only looking)
Run: .venv/bin/python bench/checkpoints_bench.py [--rounds 100]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent / "src"))
sys.path.insert(0, str(BENCH))

from loom.checkpoints import CheckpointStore  # noqa: E402
from repomap_django import ensure_django  # noqa: E402

EDITED = "django/utils/text.py"
T = TypeVar("T")


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=100)
    args = parser.parse_args()
    source = ensure_django()
    with tempfile.TemporaryDirectory(prefix="loom-cp-bench-") as scratch:
        tree = Path(scratch) / "django"
        shutil.copytree(source, tree, symlinks=True)
        python_files = sum(1 for _ in tree.rglob("*.py"))
        store = CheckpointStore(tree, Path(scratch) / "store")
        cold, first = timed(store.snapshot)
        edited = tree / EDITED
        original = edited.read_bytes()
        size_before = store.size_bytes()
        warm: list[float] = []
        for number in range(args.rounds):
            edited.write_bytes(original + f"# edit {number}\n".encode())
            seconds, _ = timed(store.snapshot)
            warm.append(seconds)
        size_after = store.size_bytes()
        undo, result = timed(lambda: store.restore(first.commit))
        assert edited.read_bytes() == original, "undo did not restore the file"
        baseline = []
        for _ in range(15):
            seconds, _ = timed(
                lambda: subprocess.run(
                    ["git", "status", "--porcelain"], cwd=tree, capture_output=True, check=True
                )
            )
            baseline.append(seconds)
    warm_ms = statistics.median(warm) * 1000
    p90_ms = sorted(warm)[int(len(warm) * 0.9)] * 1000
    base_ms = statistics.median(baseline) * 1000
    grown = size_after - size_before
    print(f"tree: Django ({python_files} Python files)")
    print(f"cold snapshot:            {cold * 1000:8.0f} ms")
    print(f"warm snapshot (median):   {warm_ms:8.1f} ms   (p90 {p90_ms:.1f} ms; target <= 100 ms)")
    print(f"git status (baseline):    {base_ms:8.1f} ms   warm/baseline = {warm_ms / base_ms:.2f}x")
    print(f"store after first:        {size_before / 1e6:8.1f} MB")
    print(
        f"store after {args.rounds} edits:    {size_after / 1e6:8.1f} MB   "
        f"(+{grown / 1e3:.0f} KB, {grown / args.rounds / 1e3:.1f} KB per checkpoint)"
    )
    print(f"undo ({len(result.paths)} file):            {undo * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
