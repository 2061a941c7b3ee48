"""`file_search` (files by glob) and `directory_list` (a tree), both honouring .gitignore."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from loom.tools._ignore import IgnoreWalker
from loom.tools.base import Risk, ToolContext, ToolError, ToolResult
from loom.tools.builtin import BuiltinTool, resolve, schema
from loom.tools.presentation import one_line

MAX_RESULTS = 200
MAX_ENTRIES = 500
_PROGRESS_EVERY = 5000


class _WalkingTool(BuiltinTool):
    def __init__(self, project_root: Path | None = None, ignores: Sequence[str] = ()) -> None:
        super().__init__(project_root)
        self.ignores = tuple(ignores)

    def _start(self, ctx: ToolContext, raw: str) -> tuple[IgnoreWalker, str]:
        path, rel = resolve(ctx, raw)
        if not path.exists():
            raise ToolError(f"{rel} does not exist; give a folder inside the project")
        if not path.is_dir():
            raise ToolError(f"{rel} is a file, not a folder; use file_read to read it")
        return IgnoreWalker(os.path.realpath(ctx.project_root), self.ignores), rel


class FileSearch(_WalkingTool):
    name = "file_search"
    description = (
        "Find files by glob (`**/*.py`), skipping ignored ones; newest first unless sort=path."
    )
    parameters = schema(
        {
            "pattern": {"type": "string", "minLength": 1},
            "path": {"type": "string", "default": "."},
            "sort": {"type": "string", "enum": ["mtime", "path"], "default": "mtime"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": MAX_RESULTS},
        },
        required=("pattern",),
    )
    risk: Risk = "read"
    subject_kind = "path"
    kind = "search"

    def title(self, args: dict[str, Any]) -> str:
        pattern = args.get("pattern")
        return f"Find files `{one_line(pattern)}`" if isinstance(pattern, str) else self.name

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        walker, base = self._start(ctx, args["path"])
        pattern: str = args["pattern"]
        import pathspec  # on first use (see loom.ignore)

        try:
            spec = pathspec.GitIgnoreSpec.from_lines([pattern])
        except Exception as exc:  # pathspec raises several types for bad globs
            raise self.fail(f"bad glob pattern {pattern!r}: {exc}") from None
        prefix = "" if base == "." else base + "/"
        found: list[tuple[float, str]] = []
        for seen, entry in enumerate(walker.walk(base), start=1):
            if seen % _PROGRESS_EVERY == 0:
                await ctx.report(None, f"searched {seen:,} files, {len(found)} matches")
            if entry.is_dir:
                continue
            if spec.match_file(entry.rel[len(prefix) :]):
                try:
                    mtime = os.stat(entry.path, follow_symlinks=False).st_mtime
                except OSError:
                    continue
                found.append((mtime, entry.rel))
        if args["sort"] == "mtime":
            found.sort(key=lambda item: (-item[0], item[1]))
        else:
            found.sort(key=lambda item: item[1])
        if not found:
            where = "the project" if base == "." else base
            return ToolResult(f"No files in {where} match {pattern!r}.", metadata={"count": 0})
        shown = [rel for _, rel in found[: args["limit"]]]
        text = "\n".join(shown)
        if len(found) > len(shown):
            text += (
                f"\n[{len(found)} files match; showing {len(shown)}. "
                "Narrow the pattern or the path to see the rest.]"
            )
        return ToolResult(text, metadata={"count": len(found)})


class DirectoryList(_WalkingTool):
    name = "directory_list"
    description = "A folder's tree (folders end with /), skipping ignored ones."
    parameters = schema(
        {
            "path": {"type": "string", "default": "."},
            "depth": {"type": "integer", "minimum": 1, "maximum": 20, "default": 2},
        },
    )
    risk: Risk = "read"
    subject_kind = "path"
    kind = "search"

    def title(self, args: dict[str, Any]) -> str:
        return f"List {args.get('path') or '.'}"

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        walker, base = self._start(ctx, args["path"])
        start = "" if base == "." else base
        lines = [f"{base}/" if base != "." else "./"]
        total = 0
        for entry in walker.walk(start, max_depth=args["depth"]):
            total += 1
            if total > MAX_ENTRIES:
                continue
            rel = entry.rel[len(start) + 1 :] if start else entry.rel
            depth = rel.count("/")
            name = rel.rsplit("/", 1)[-1] + ("/" if entry.is_dir else "")
            lines.append("  " * (depth + 1) + name)
        if total == 0:
            lines.append("  (empty)")
        if total > MAX_ENTRIES:
            lines.append(
                f"[{total:,} entries; showing the first {MAX_ENTRIES}. List a subfolder or "
                "use a smaller depth.]"
            )
        return ToolResult("\n".join(lines), metadata={"entries": total})
