"""Start-up and history commands of two source trees, measured in the same run.

    .venv/bin/python bench/compare_trees.py --before /tmp/base --after . [--runs 21]
        [--map-root bench/.work/django-6.1.3]

For each command (`loom --version`, `loom list`, `loom search WORD`, `loom map` on a
small project; with --map-root also `loom map` on that tree, unchanged and after an edit
of one file before each run), runs `python -m loom ...` with PYTHONPATH=<tree>/src,
alternating the two trees run by run so machine load hits both alike, and prints the
medians and the ratio after/before, of wall time and of CPU time (user + system, which a
busy machine disturbs less). The history commands read a 10,000-thread corpus (bench/
gen_threads_corpus.py, generated into --home if missing) copied into one LOOM_HOME per
tree, so each builds (before timing) and reads its own index schema. Baseline for the
floor: `python -c pass`.
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
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
EDITED = "django/utils/text.py"  # with --map-root: the file each edit run appends to


def once(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run."""
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - started
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    return wall, cpu


def env_for(tree: Path | None, home: Path) -> dict[str, str]:
    env = {**os.environ, "LOOM_HOME": str(home)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode cached
    if tree is not None:
        env["PYTHONPATH"] = str(tree / "src")
    return env


def compare(
    name: str,
    args: list[str],
    trees: dict[str, Path],
    home: Path,
    runs: int,
    cwd: Path,
    before_each: Callable[[], None] = lambda: None,
) -> None:
    cmd = [PYTHON, "-m", "loom", *args] if args else [PYTHON, "-c", "pass"]
    envs = {label: env_for(tree, home / label) for label, tree in trees.items()}
    for env in envs.values():  # warm-up: bytecode, page cache, the index
        once(cmd, env, cwd)
    times: dict[str, list[float]] = {label: [] for label in trees}
    cpu: dict[str, list[float]] = {label: [] for label in trees}
    for _ in range(runs):
        for label, env in envs.items():
            before_each()
            wall, used = once(cmd, env, cwd)
            times[label].append(wall)
            cpu[label].append(used)
    medians = {label: statistics.median(ts) * 1000 for label, ts in times.items()}
    cpus = {label: statistics.median(ts) * 1000 for label, ts in cpu.items()}
    before, after = medians["before"], medians["after"]
    print(
        f"{name:<28} before {before:7.1f} ms   after {after:7.1f} ms   "
        f"after/before {after / before:5.2f}   CPU {cpus['before']:6.1f} -> "
        f"{cpus['after']:6.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="e.g. a worktree of main")
    parser.add_argument("--after", type=Path, default=ROOT)
    parser.add_argument("--home", type=Path, default=Path("/tmp/loom-bench"))
    parser.add_argument("--threads", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument(
        "--map-root", type=Path, help="a large tree (bench/repomap_django.py makes Django's)"
    )
    parser.add_argument("--only-map", action="store_true", help="just the map cases")
    args = parser.parse_args()
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    corpus = args.home / "corpus"
    threads_dir = corpus / "data" / "threads"
    if not threads_dir.is_dir() or len(os.listdir(threads_dir)) < args.threads:
        subprocess.run(
            [
                PYTHON,
                str(ROOT / "bench" / "gen_threads_corpus.py"),
                "--home",
                str(corpus),
                "--threads",
                str(args.threads),
            ],
            check=True,
        )
    for label in trees:
        if not (args.home / label / "data" / "threads").is_dir():
            (args.home / label / "data").mkdir(parents=True, exist_ok=True)
            shutil.copytree(threads_dir, args.home / label / "data" / "threads")
    project = args.home / "project"
    (project / "pkg").mkdir(parents=True, exist_ok=True)
    (project / ".git").mkdir(exist_ok=True)
    for i in range(20):
        (project / "pkg" / f"m{i}.py").write_text(
            f"def f{i}(x):\n    return g{(i + 1) % 20}(x)\n\n\ndef g{i}(x):\n    return x\n"
        )
    print(f"{args.runs} runs each, alternating; corpus {args.threads} threads in {args.home}")
    if not args.only_map:
        compare(
            "python -c pass (floor)",
            [],
            {"before": None, "after": None},  # type: ignore[dict-item]
            args.home,
            args.runs,
            project,
        )
        compare("loom --version", ["--version"], trees, args.home, args.runs, project)
        compare("loom list (10k threads)", ["list"], trees, args.home, args.runs, project)
        compare(
            "loom search (10k threads)",
            ["search", "migration"],
            trees,
            args.home,
            args.runs,
            project,
        )
        compare("loom map (20 files)", ["map"], trees, args.home, args.runs, project)
    if args.map_root:
        big = args.map_root.resolve()
        files = len(subprocess.run(
            ["git", "ls-files"], cwd=big, capture_output=True, text=True, check=True
        ).stdout.splitlines())  # fmt: skip
        map_args = ["map", "--tokens", "1024", "--root", str(big)]
        compare(f"loom map ({files} files)", map_args, trees, args.home, args.runs, big)
        edited = big / EDITED
        original = edited.read_bytes()
        counter = iter(range(10**6))

        def edit() -> None:
            with edited.open("a") as handle:
                handle.write(f"\n\ndef bench_added_{next(counter)}(value):\n    return value\n")

        try:
            compare("  after an edit of one file", map_args, trees, args.home, args.runs, big, edit)
        finally:
            edited.write_bytes(original)


if __name__ == "__main__":
    main()
