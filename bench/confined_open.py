"""Cost of opening files beneath the project root (openat walk, O_NOFOLLOW) against a
plain open by path, and of the git tool's config guard, on the same files in one run.

Prints medians over rounds and the ratio. Run: .venv/bin/python bench/confined_open.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from loom._beneath import Folders, open_following_inside


def make_tree(root: Path, files: int) -> list[str]:
    rels = []
    for i in range(files):
        rel = f"pkg{i % 10}/sub{i % 7}/deep{i % 3}/mod{i}.py"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"def f{i}():\n    return {i}\n")
        rels.append(rel)
    return rels


def by_path(root: str, rels: list[str]) -> None:
    for rel in rels:
        with open(os.path.join(root, rel), "rb") as handle:
            handle.read()


def beneath(root: str, rels: list[str]) -> None:
    for rel in rels:
        with os.fdopen(open_following_inside(root, rel), "rb") as handle:
            handle.read()


def beneath_batch(root: str, rels: list[str]) -> None:
    with Folders(root) as folders:
        for rel in rels:
            with os.fdopen(open_following_inside(root, rel, folders), "rb") as handle:
                handle.read()


def median_ms(fn, *args, rounds: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn(*args)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.realpath(tmp)
        rels = make_tree(Path(root), args.files)
        plain = median_ms(by_path, root, rels, rounds=args.rounds)
        safe = median_ms(beneath, root, rels, rounds=args.rounds)
        batch = median_ms(beneath_batch, root, rels, rounds=args.rounds)
        print(f"{args.files} files, median of {args.rounds}:")
        print(f"  open by path          {plain:8.1f} ms  ({plain / args.files * 1000:.1f} us/file)")
        print(f"  open beneath          {safe:8.1f} ms  ({safe / args.files * 1000:.1f} us/file)")
        print(f"  beneath, batched      {batch:8.1f} ms  ({batch / args.files * 1000:.1f} us/file)")
        print(
            f"  ratio single {safe / plain:.2f}x, batched {batch / plain:.2f}x"
            " (repointel and the Python search open in batches)"
        )
        subprocess.run(["git", "init", "-q", root], check=True)
        keys = median_ms(
            lambda: subprocess.run(
                ["git", "config", "--list", "--name-only", "-z"],
                cwd=root,
                capture_output=True,
                check=True,
            ),
            rounds=args.rounds,
        )
        status = median_ms(
            lambda: subprocess.run(
                ["git", "status", "--short"], cwd=root, capture_output=True, check=True
            ),
            rounds=args.rounds,
        )
        print(
            f"  git config --list (the git tool's guard) {keys:.1f} ms; git status {status:.1f} ms"
        )


if __name__ == "__main__":
    main()
