"""How often a swapped symlink lets a read escape the project: check-then-open by path
(the old way) against opening beneath the root, and ripgrep's hits with and without
their confirmation, in the same run against the same swapping thread.

A thread swaps `data/` and `f.txt` for symlinks to an outside folder and back as fast as
it can (tests/tools/test_confinement_race.py's Swapper) while reads run. Prints escapes
per attempts for each way. Run: .venv/bin/python bench/symlink_race.py [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.tools.test_confinement_race import SECRET, Swapper

import loom.tools.content_search as content_search
from loom.tools._paths import confine
from loom.tools._search_py import read_beneath
from loom.tools.base import ToolContext, ToolError


def project() -> tuple[Path, Path]:
    tmp = Path(tempfile.mkdtemp())
    root, outside = tmp / "proj", tmp / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "t.txt").write_text(SECRET + "\n")
    return root, outside


def by_path(root: Path, rounds: int) -> tuple[int, int]:
    escapes = attempts = 0
    for _ in range(rounds):
        for path in ("data/t.txt", "f.txt"):
            try:
                resolved, _ = confine(root, path)
                with open(resolved) as handle:
                    escapes += SECRET in handle.read()
                attempts += 1
            except (ToolError, OSError):
                pass
    return escapes, attempts


def beneath(root: Path, rounds: int) -> tuple[int, int]:
    escapes = attempts = 0
    for _ in range(rounds):
        for path in ("data/t.txt", "f.txt"):
            data = read_beneath(str(root), path, 1_000_000)
            if data is not None:
                attempts += 1
                escapes += SECRET.encode() in data
    return escapes, attempts


async def ripgrep(root: Path, rounds: int, confirm: bool) -> tuple[int, int]:
    real = content_search._confirmed
    if not confirm:
        content_search._confirmed = lambda root, found: found  # type: ignore[assignment]
    try:
        search, ctx = content_search.ContentSearch(root), ToolContext(root)
        escapes = attempts = 0
        for _ in range(rounds):
            try:
                result = await search.run({"pattern": "SECRET|inside", "path": "."}, ctx)
            except ToolError:
                continue
            attempts += 1
            escapes += SECRET in result.content
        return escapes, attempts
    finally:
        content_search._confirmed = real


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2000)
    rounds = parser.parse_args().rounds
    ways = [
        ("check, then open by path", lambda root: by_path(root, rounds)),
        ("open beneath the root", lambda root: beneath(root, rounds)),
        ("ripgrep, hits unconfirmed", lambda root: asyncio.run(ripgrep(root, rounds // 4, False))),
        ("ripgrep, hits confirmed", lambda root: asyncio.run(ripgrep(root, rounds // 4, True))),
    ]
    for name, run in ways:
        root, outside = project()
        with Swapper(root, outside) as swapper:
            escapes, attempts = run(root)
        rate = 100 * escapes / attempts if attempts else 0.0
        print(
            f"{name:28} {escapes:5} escapes in {attempts:6} reads ({rate:.2f} %),"
            f" {swapper.swaps} swaps"
        )


if __name__ == "__main__":
    main()
