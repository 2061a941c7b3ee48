"""`file_read`: a text file with numbered lines, a page at a time."""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path
from typing import Any, BinaryIO

from loom.core.images import MAX_IMAGE_BYTES, media_type_of
from loom.tools._paths import open_confined
from loom.tools.base import Risk, ToolContext, ToolError, ToolResult, editor_files
from loom.tools.builtin import BuiltinTool, resolve, schema

DEFAULT_LIMIT = 2000
IMAGE_KEY = "image"  # ToolResult.metadata: (path, bytes) of an image file read
MAX_LINE_CHARS = 2000
MAX_OUTPUT_CHARS = 100_000
_SNIFF_BYTES = 8192
_MAGIC = {
    b"\x89PNG": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"GIF8": "a GIF image",
    b"%PDF": "a PDF document",
    b"PK\x03\x04": "a zip archive",
    b"\x7fELF": "an executable",
    b"\x1f\x8b": "a gzip archive",
    b"SQLite format 3": "an SQLite database",
}


def binary_kind(head: bytes) -> str | None:
    """What a file looks like when it is not text, from its first bytes; None for text."""
    for magic, kind in _MAGIC.items():
        if head.startswith(magic):
            return kind
    if b"\x00" in head:
        return "binary data"
    return None


def numbered(lines: list[str], first: int) -> str:
    return "\n".join(f"{first + i:>6}\t{line}" for i, line in enumerate(lines))


class FileRead(BuiltinTool):
    name = "file_read"
    description = (
        "A text file's numbered lines (or an image, if you take images), 2000 at a "
        "time; page with `offset`."
    )
    parameters = schema(
        {
            "path": {"type": "string"},
            "offset": {
                "type": "integer",
                "minimum": 1,
                "default": 1,
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "default": DEFAULT_LIMIT,
            },
        },
        required=("path",),
    )
    risk: Risk = "read"
    subject_kind = "path"
    kind = "read"

    def title(self, args: dict[str, Any]) -> str:
        return f"Read {args['path']}" if args.get("path") else self.name

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path, rel = resolve(ctx, args["path"])
        if path.is_dir():
            raise ToolError(f"{rel} is a directory; use directory_list to see what is in it")
        editor = editor_files(ctx)
        if editor is not None:
            text = await _editor_text(editor, ctx, path, rel)
            if text is not None:  # the editor's buffer, unsaved changes included
                if not text:
                    return ToolResult(f"({rel} is empty)", metadata={"path": rel, "lines": 0})
                return self._page(io.BytesIO(text.encode("utf-8")), rel, args["offset"],
                                  args["limit"])  # fmt: skip
        try:
            # opened beneath the root without following links: what was checked is read
            flags = os.O_RDONLY | os.O_NONBLOCK  # a FIFO must not hang the call
            handle = os.fdopen(open_confined(ctx.project_root, rel, flags), "rb")
        except FileNotFoundError:
            raise ToolError(_missing_message(path, rel)) from None
        except IsADirectoryError:
            raise ToolError(f"{rel} is a directory; use directory_list to see it") from None
        except OSError as exc:
            raise ToolError(f"cannot read {rel}: {exc.strerror or exc}") from None
        with handle:
            try:
                info = os.fstat(handle.fileno())
                if not stat.S_ISREG(info.st_mode):
                    raise ToolError(f"{rel} is not a regular file; file_read reads files")
                head = handle.read(_SNIFF_BYTES)
                kind = binary_kind(head)
                media_type = media_type_of(head[:16])
                if media_type is not None and info.st_size <= MAX_IMAGE_BYTES:
                    data = head + handle.read(MAX_IMAGE_BYTES + 1 - len(head))
                    text = f"{rel} is an image ({media_type}, {len(data):,} bytes)."
                    return ToolResult(text, metadata={IMAGE_KEY: (rel, data)})
                if kind:
                    raise ToolError(
                        f"{rel} is {kind} ({info.st_size:,} bytes), not a text file; "
                        "file_read shows text only"
                    )
                if info.st_size == 0 and not head:
                    return ToolResult(f"({rel} is empty)", metadata={"path": rel, "lines": 0})
                return self._page(handle, rel, args["offset"], args["limit"])
            except OSError as exc:
                raise ToolError(f"cannot read {rel}: {exc.strerror or exc}") from None

    def _page(self, handle: BinaryIO, rel: str, offset: int, limit: int) -> ToolResult:
        shown: list[str] = []
        chars = 0
        cut_lines = 0
        capped = False  # the output size cap was reached before `limit`
        handle.seek(0)
        text_handle = io.TextIOWrapper(handle, encoding="utf-8", errors="replace", newline="\n")
        for number, line in enumerate(text_handle, start=1):
            if number < offset:
                continue
            if len(shown) >= limit:
                break
            line = line.rstrip("\r\n")
            if len(line) > MAX_LINE_CHARS:
                line = line[:MAX_LINE_CHARS] + f" … [line cut, {len(line):,} chars]"
                cut_lines += 1
            if chars + len(line) > MAX_OUTPUT_CHARS and shown:
                capped = True
                break
            shown.append(line)
            chars += len(line) + 8
        text_handle.detach()
        total = _count_lines(handle)
        if offset > total:
            raise ToolError(
                f"offset {offset} is past the end of {rel}, which has {total} lines; "
                f"use an offset between 1 and {total}"
            )
        last = offset + len(shown) - 1
        text = numbered(shown, offset)
        if last < total:
            reason = "output size limit" if capped else f"limit {limit}"
            text += (
                f"\n\n[{rel}: showing lines {offset}-{last} of {total} ({reason}). "
                f"Call file_read with offset={last + 1} to read on, or use content_search "
                "to find the part you need.]"
            )
        if cut_lines:
            text += f"\n[{cut_lines} long line(s) were cut at {MAX_LINE_CHARS} characters.]"
        meta = {"path": rel, "lines": total, "first": offset, "last": last}
        return ToolResult(text, metadata=meta)


async def _editor_text(editor: Any, ctx: ToolContext, path: Path, rel: str) -> str | None:
    """The editor's text for a file that is confined to the project (checked by opening
    it beneath the root, as a disk read would); None: read the disk instead."""
    try:
        os.close(open_confined(ctx.project_root, rel))
    except FileNotFoundError:
        pass  # the editor may hold a buffer not yet saved
    except IsADirectoryError:
        raise ToolError(f"{rel} is a directory; use directory_list to see it") from None
    except OSError as exc:
        raise ToolError(f"cannot read {rel}: {exc.strerror or exc}") from None
    try:
        return await editor.read_text(path)
    except Exception:  # the editor could not answer: the disk can
        return None


def _count_lines(handle: BinaryIO) -> int:
    count = 0
    last = b"\n"
    handle.seek(0)
    while chunk := handle.read(1 << 20):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (last != b"\n")


def _missing_message(path: os.PathLike[str], rel: str) -> str:
    import difflib

    parent = os.path.dirname(path)
    try:
        siblings = os.listdir(parent)
    except OSError:
        return f"{rel} does not exist; use file_search to find the file"
    close = difflib.get_close_matches(os.path.basename(path), siblings, n=3, cutoff=0.6)
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    return f"{rel} does not exist.{hint} Use file_search to find files by name."
