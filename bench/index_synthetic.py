"""`loom index` on a synthetic repository of 100,000 files (cold, then a warm rescan).

Generates bench/.work/synthetic-100k/ once: 1,000 packages of 100 small Python modules
(a function and a class each, calling into the next package), a nested .gitignore with a
negation, and some ignored build output. Times whole `loom index` processes with a fresh
cache (cold) and again with nothing changed (warm), and a baseline in the same run:
`git status` (git's own stat-based rescan of the same tree, with its index built).
Targets: cold <= 20 s, warm <= 2 s. Run: .venv/bin/python bench/index_synthetic.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORK = Path(__file__).resolve().parent / ".work"


def generate(root: Path, n_files: int) -> None:
    marker = root / ".generated"
    if marker.exists() and marker.read_text() == str(n_files):
        return
    per_dir = 100
    for d in range(n_files // per_dir):
        folder = root / f"pkg{d // 100:02d}" / f"mod{d:04d}"
        folder.mkdir(parents=True, exist_ok=True)
        for f in range(per_dir):
            (folder / f"f{f:03d}.py").write_text(
                f"from pkg.mod{(d + 1) % 1000:04d} import helper_{f}\n\n\n"
                f"def helper_{f}(value):\n    return value + {f}\n\n\n"
                f"class Model{d}x{f}:\n    def run(self):\n        return helper_{f}(1)\n"
            )
    (root / ".gitignore").write_text("build/\n*.log\n!keep.log\n")
    (root / "build").mkdir(exist_ok=True)
    for n in range(50):
        (root / "build" / f"out{n}.py").write_text("x = 1\n")
    if not (root / ".git").exists():
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    marker.write_text(str(n_files))


def timed(cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> float:
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
    if done.returncode != 0:
        raise SystemExit(f"{cmd} failed:\n{done.stderr[-2000:]}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    root = WORK / f"synthetic-{args.files // 1000}k"
    root.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    generate(root, args.files)
    print(f"corpus: {root} ({args.files:,} files; ready in {time.perf_counter() - started:.1f} s)")
    cmd = [sys.executable, "-m", "loom", "index", "--root", str(root)]
    cold, warm = [], []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as home:
            env = {**os.environ, "LOOM_HOME": home}
            cold.append(timed(cmd, env))
            for _ in range(args.repeat):
                warm.append(timed(cmd, env))
    git = [
        timed(["git", "status", "--porcelain"], dict(os.environ), cwd=root)
        for _ in range(args.repeat)
    ]
    print(f"cores: {os.cpu_count()}; medians of {args.repeat} (whole process, seconds)")
    print(f"  loom index cold   {statistics.median(cold):7.2f}   target <= 20 s")
    print(f"  loom index warm   {statistics.median(warm):7.2f}   target <= 2 s")
    print(
        f"  git status (same tree, baseline)  {statistics.median(git):7.2f}  "
        f"(warm loom / git = {statistics.median(warm) / statistics.median(git):.1f}x)"
    )


if __name__ == "__main__":
    main()
