"""Repo map on Django's source, Loom side by side with Aider's RepoMap, same budgets.

Downloads the Django sdist into bench/.work/ (pip download), makes it a git repo,
installs aider-chat into its own venv under bench/.work/, then times whole processes:
  cold  - no caches at all (fresh LOOM_HOME; Aider's .aider.tags.cache deleted)
  warm  - a new process, nothing changed
  edit  - a new process after appending a function to one file
Prints medians and the Aider/Loom ratio. Run: .venv/bin/python bench/repomap_django.py
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
WORK = BENCH / ".work"
DJANGO_VERSION = "6.1.3"
AIDER_VENV = WORK / "aider-venv"
EDITED = "django/utils/text.py"


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kwargs)


def ensure_django() -> Path:
    root = WORK / f"django-{DJANGO_VERSION}"
    if (root / ".git").exists():
        return root
    WORK.mkdir(parents=True, exist_ok=True)
    sdist = WORK / f"django-{DJANGO_VERSION}.tar.gz"
    if not sdist.exists():
        run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--no-binary",
                ":all:",
                "--ignore-requires-python",
                f"django=={DJANGO_VERSION}",
                "-d",
                str(WORK),
            ]
        )
    with tarfile.open(sdist) as archive:
        archive.extractall(WORK, filter="data")
    run(["git", "init", "-q"], cwd=root)
    run(["git", "add", "-A"], cwd=root)
    run(
        [
            "git",
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.invalid",
            "commit",
            "-q",
            "-m",
            "django sdist",
        ],
        cwd=root,
    )
    return root


def ensure_aider() -> tuple[Path | None, str]:
    python = AIDER_VENV / "bin" / "python"
    if (
        python.exists()
        and subprocess.run(
            [str(python), "-c", "import aider.repomap"], capture_output=True
        ).returncode
        == 0
    ):
        return python, ""
    try:
        run([sys.executable, "-m", "venv", str(AIDER_VENV)])
        run([str(python), "-m", "pip", "install", "-q", "aider-chat"], timeout=1800)
        run([str(python), "-c", "import aider.repomap"])
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        return None, f"aider-chat could not be installed: {detail.strip()[-600:]}"
    return python, ""


def timed(
    cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None
) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{cmd[:4]} failed:\n{done.stderr[-2000:]}")
    return elapsed, done.stdout


def restore(root: Path) -> None:
    run(["git", "checkout", "-q", "--", EDITED], cwd=root)


def edit(root: Path, n: int) -> None:
    with open(root / EDITED, "a") as handle:
        handle.write(f"\n\ndef bench_added_function_{n}(value):\n    return value\n")


def loom_runs(root: Path, tokens: int, repeat: int) -> dict[str, list[float]]:
    cmd = [sys.executable, "-m", "loom", "map", "--tokens", str(tokens), "--root", str(root)]
    times: dict[str, list[float]] = {"cold": [], "warm": [], "edit": []}
    restore(root)
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as home:
            env = {**os.environ, "LOOM_HOME": home}
            times["cold"].append(timed(cmd, env)[0])
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "LOOM_HOME": home}
        timed(cmd, env)
        for _ in range(repeat):
            times["warm"].append(timed(cmd, env)[0])
        for n in range(repeat):
            edit(root, n)
            elapsed, _out = timed(cmd, env)
            times["edit"].append(elapsed)
        restore(root)
    return times


def loom_in_process_edits(root: Path, tokens: int, repeat: int) -> list[float]:
    """A live session's case: the process (and its index) stays up; one file changes."""
    from loom.repointel.service import RepoIntel
    from loom.repointel.settings import RepoSettings

    restore(root)
    with tempfile.TemporaryDirectory() as home:
        intel = RepoIntel(root, RepoSettings(), cache_dir=Path(home))
        intel.repo_map(tokens)
        times = []
        for n in range(repeat):
            edit(root, n)
            started = time.perf_counter()
            intel.refresh()
            intel.repo_map(tokens)
            times.append(time.perf_counter() - started)
        intel.close()
    restore(root)
    return times


def aider_runs(python: Path, root: Path, tokens: int, repeat: int) -> dict[str, list[float]]:
    cmd = [str(python), str(BENCH / "_aider_map.py"), str(root), str(tokens)]
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    cache = root / ".aider.tags.cache.v4"
    times: dict[str, list[float]] = {"cold": [], "warm": [], "edit": []}
    restore(root)
    for _ in range(repeat):
        shutil.rmtree(cache, ignore_errors=True)
        times["cold"].append(timed(cmd, env, cwd=root)[0])
    for _ in range(repeat):
        times["warm"].append(timed(cmd, env, cwd=root)[0])
    for n in range(repeat):
        edit(root, n)
        times["edit"].append(timed(cmd, env, cwd=root)[0])
    restore(root)
    shutil.rmtree(cache, ignore_errors=True)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tokens", type=int, nargs="*", default=[1024, 4096])
    args = parser.parse_args()
    root = ensure_django()
    files = run(["git", "ls-files", "*.py"], cwd=root).stdout.split()
    print(f"corpus: Django {DJANGO_VERSION} sdist, {len(files)} Python files, as a git repo")
    python, why_not = ensure_aider()
    if python is None:
        print(f"baseline missing: {why_not}")
    targets = {"cold": None, "warm": 0.3, "edit": 0.5}
    for tokens in args.tokens:
        ours = loom_runs(root, tokens, args.repeat)
        theirs = aider_runs(python, root, tokens, args.repeat) if python else None
        print(f"\nbudget {tokens} tokens (median of {args.repeat}, whole process, seconds)")
        print(f"  {'case':<6}{'loom':>9}{'aider':>9}{'aider/loom':>12}  target")
        for case, limit in targets.items():
            mine = statistics.median(ours[case])
            other = statistics.median(theirs[case]) if theirs else float("nan")
            goal = f"<= {limit} s" if limit else ">= 2x faster than aider"
            print(f"  {case:<6}{mine:>9.3f}{other:>9.3f}{other / mine:>11.1f}x  {goal}")
        live = statistics.median(loom_in_process_edits(root, tokens, args.repeat))
        print(f"  edit, in a live process (index kept, as in a session): {live:.3f} s")
    loom_map = run(
        [sys.executable, "-m", "loom", "map", "--tokens", "1024", "--root", str(root)]
    ).stdout
    print("\nfirst lines of Loom's 1024-token map:")
    print("\n".join(loom_map.splitlines()[:12]))


if __name__ == "__main__":
    main()
