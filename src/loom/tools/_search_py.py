"""The Python content search used when ripgrep is not installed."""

from __future__ import annotations

import asyncio
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from loom._beneath import Folders, open_following_inside
from loom.tools._ignore import IgnoreWalker
from loom.tools.base import ToolContext

_BATCH = 500


@dataclass
class FileHits:
    """Matching lines of one file (and their context lines), line number -> text."""

    rel: str
    lines: dict[int, str] = field(default_factory=dict)
    matches: set[int] = field(default_factory=set)


def read_beneath(
    root: str, rel: str, max_bytes: int, folders: Folders | None = None
) -> bytes | None:
    """The file's bytes, opened beneath the root without following links once in-project
    links are resolved; None for links that leave the project, races, and big files."""
    try:
        with os.fdopen(open_following_inside(root, rel, folders), "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
                return None
            return handle.read(max_bytes + 1)
    except OSError:  # vanished, unreadable, or a symlink appeared (Escape)
        return None


def _search_file(
    folders: Folders, rel: str, regex: re.Pattern[str], context: int, max_bytes: int
) -> FileHits | None:
    data = read_beneath(folders.root, rel, max_bytes, folders)
    if data is None or len(data) > max_bytes:
        return None
    if b"\x00" in data[:8192]:
        return None  # binary
    text = data.decode("utf-8", errors="replace")
    if not regex.search(text):  # one pass over the whole file rejects most files fast
        return None
    lines = text.splitlines()
    hits = FileHits(rel)
    for index, line in enumerate(lines):
        if regex.search(line):
            hits.matches.add(index + 1)
            for near in range(max(0, index - context), min(len(lines), index + context + 1)):
                hits.lines[near + 1] = lines[near]
    return hits if hits.matches else None


async def python_search(
    root: str,
    rel: str,
    regex: re.Pattern[str],
    args: dict[str, Any],
    ignores: Sequence[str],
    ctx: ToolContext,
    max_bytes: int,
) -> tuple[list[FileHits], bool]:
    import pathspec  # on first use (see loom.ignore)

    include = pathspec.GitIgnoreSpec.from_lines([args["include"]]) if args.get("include") else None
    walker = IgnoreWalker(root, ignores)
    if os.path.isfile(os.path.join(root, rel)):
        files = [rel]
    else:
        start = "" if rel == "." else rel
        files = [
            e.rel
            for e in walker.walk(start)
            if not e.is_dir and (include is None or include.match_file(e.rel))
        ]
    found: list[FileHits] = []
    matched = 0
    for offset in range(0, len(files), _BATCH):
        batch = files[offset : offset + _BATCH]

        def run(batch: list[str] = batch) -> list[FileHits]:
            with Folders(root) as folders:
                return [
                    hit
                    for name in batch
                    if (hit := _search_file(folders, name, regex, args["context"], max_bytes))
                ]

        for hit in await asyncio.to_thread(run):
            if matched + len(hit.matches) > args["limit"]:
                keep = sorted(hit.matches)[: args["limit"] - matched]
                hit.matches = set(keep)
                found.append(hit)
                return found, True
            matched += len(hit.matches)
            found.append(hit)
        if len(files) > _BATCH:
            done = min(offset + _BATCH, len(files))
            await ctx.report(done / len(files), f"searched {done:,} of {len(files):,} files")
    return found, False
