"""`file_write` and `file_edit`: change files, atomically, inside the project."""

from __future__ import annotations

import difflib
import os
import stat
from dataclasses import replace
from pathlib import Path
from typing import Any

from loom.tools._paths import lexical_path, open_confined, replace_confined
from loom.tools._protected import protected_reason
from loom.tools.base import Risk, ToolContext, ToolError, ToolResult, editor_files
from loom.tools.builtin import BuiltinTool, resolve, schema
from loom.tools.file_read import binary_kind, numbered
from loom.tools.presentation import EditPreview, ToolPresentation


async def write_text(ctx: ToolContext, raw: str, rel: str, text: str) -> bool:
    """Write `rel`: into the editor's buffer when the face gave one (ACP), else to disk
    with `write_checked`. True when the file was created."""
    editor = editor_files(ctx)
    if editor is None:
        return write_checked(ctx, raw, rel, text)
    root = _checked_root(ctx, raw, rel)
    existed = os.path.lexists(root / rel)
    try:
        if await editor.write_text(root / rel, text):
            return not existed
    except Exception:  # the editor could not take it: the disk can
        pass
    return write_checked(ctx, raw, rel, text)


def _checked_root(ctx: ToolContext, raw: str, rel: str) -> Path:
    """The real project root, after refusing a write that reaches a protected file
    (`_protected.py`) only through a symlink: the permission question named another path."""
    root = Path(os.path.realpath(ctx.project_root))
    written = lexical_path(root, raw)
    if written != rel and protected_reason(root, rel) and not protected_reason(root, written or ""):
        raise ToolError(
            f"{raw!r} leads through a symlink to {rel}, which changes what git or Loom "
            f"runs; write {rel} itself if that is really meant (it asks first)"
        )
    return root


def write_checked(ctx: ToolContext, raw: str, rel: str, text: str) -> bool:
    """Replace `rel` (resolved by `confine`) atomically beneath the project root; True
    when it was created."""
    root = _checked_root(ctx, raw, rel)
    try:
        return replace_confined(root, rel, text.encode("utf-8"))
    except IsADirectoryError:
        raise ToolError(f"{rel} is a directory; give the path of a file to write") from None
    except OSError as exc:
        raise ToolError(f"cannot write {rel}: {exc.strerror or exc}") from None


class FileWrite(BuiltinTool):
    name = "file_write"
    description = "Create or overwrite a whole file (and its folders); prefer file_edit for a part."
    parameters = schema(
        {
            "path": {"type": "string"},
            "content": {"type": "string"},
        },
        required=("path", "content"),
    )
    risk: Risk = "write"
    subject_kind = "path"
    kind = "edit"

    def present(self, args: dict[str, Any]) -> ToolPresentation:
        shown = super().present(args)
        content = args.get("content")
        if shown.path is None or not isinstance(content, str):
            return replace(shown, edits_files=True)
        preview = EditPreview(shown.path, content)
        return replace(shown, title=f"Write {shown.path}", edits_files=True, preview=preview)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path, rel = resolve(ctx, args["path"])
        if rel == "." or path.is_dir():
            raise ToolError(f"{rel} is a directory; give the path of a file to write")
        content: str = args["content"]
        created = await write_text(ctx, args["path"], rel, content)
        lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
        verb = "Created" if created else "Overwrote"
        return ToolResult(
            f"{verb} {rel} ({lines} lines, {len(content.encode('utf-8')):,} bytes).",
            metadata={"path": rel, "created": created},
        )


class FileEdit(BuiltinTool):
    name = "file_edit"
    description = (
        "Replace text in a file read first. `old_string` must match exactly (indentation "
        "too, no line-number prefixes) and be unique unless `replace_all`."
    )
    parameters = schema(
        {
            "path": {"type": "string"},
            "old_string": {"type": "string", "minLength": 1},
            "new_string": {"type": "string"},
            "replace_all": {"type": "boolean", "default": False},
        },
        required=("path", "old_string", "new_string"),
    )
    risk: Risk = "write"
    subject_kind = "path"
    kind = "edit"

    def present(self, args: dict[str, Any]) -> ToolPresentation:
        shown = super().present(args)
        old, new = args.get("old_string"), args.get("new_string")
        if shown.path is None or not isinstance(old, str) or not isinstance(new, str):
            return replace(shown, edits_files=True)
        preview = EditPreview(shown.path, new, old, bool(args.get("replace_all")))
        return replace(shown, title=f"Edit {shown.path}", edits_files=True, preview=preview)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path, rel = resolve(ctx, args["path"])
        old, new = args["old_string"], args["new_string"]
        if old == new:
            raise ToolError("old_string and new_string are the same; there is nothing to change")
        text = await _read_for_edit(ctx, path, rel)
        if "\r\n" in text and "\r" not in old:  # the model writes \n; the file uses \r\n
            old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        count = text.count(old)
        if count == 0:
            raise ToolError(_not_found_message(text, old, rel))
        if count > 1 and not args["replace_all"]:
            lines = _match_lines(text, old)
            shown = ", ".join(map(str, lines[:10])) + (" …" if len(lines) > 10 else "")
            raise ToolError(
                f"old_string occurs {count} times in {rel} (at lines {shown}). Include more "
                "surrounding lines in old_string so it matches exactly one place, or set "
                "replace_all=true to change every occurrence."
            )
        first_line = text[: text.index(old)].count("\n") + 1
        updated = text.replace(old, new) if args["replace_all"] else text.replace(old, new, 1)
        await write_text(ctx, args["path"], rel, updated)
        snippet_lines = updated.splitlines()
        start = max(first_line - 3, 1)
        end = min(first_line + new.count("\n") + 3, len(snippet_lines))
        snippet = numbered(snippet_lines[start - 1 : end], start)
        what = f"{count} occurrences" if count > 1 else f"1 occurrence at line {first_line}"
        return ToolResult(
            f"Edited {rel}: replaced {what}.\n{snippet}",
            metadata={"path": rel, "replacements": count, "line": first_line},
        )


async def _read_for_edit(ctx: ToolContext, path: Path, rel: str) -> str:
    if path.is_dir():
        raise ToolError(f"{rel} is a directory; file_edit changes files")
    editor = editor_files(ctx)
    if editor is not None:
        from loom.tools.file_read import _editor_text

        text = await _editor_text(editor, ctx, path, rel)
        if text is not None:  # the buffer the person sees, unsaved changes included
            return text
    try:
        flags = os.O_RDONLY | os.O_NONBLOCK  # a FIFO must not hang the call
        with os.fdopen(open_confined(ctx.project_root, rel, flags), "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise ToolError(f"{rel} is not a regular file; file_edit changes files")
            data = handle.read()
    except FileNotFoundError:
        raise ToolError(
            f"{rel} does not exist; use file_write to create it, or file_search to find it"
        ) from None
    except OSError as exc:
        raise ToolError(f"cannot read {rel}: {exc.strerror or exc}") from None
    kind = binary_kind(data[:8192])
    if kind:
        raise ToolError(f"{rel} is {kind}, not a text file; file_edit changes text files only")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(
            f"{rel} is not valid UTF-8; file_edit cannot change it without corrupting it"
        ) from None


def _match_lines(text: str, old: str) -> list[int]:
    lines, start = [], 0
    while (index := text.find(old, start)) != -1:
        lines.append(text.count("\n", 0, index) + 1)
        start = index + 1
    return lines


def _not_found_message(text: str, old: str, rel: str) -> str:
    """Point at the closest text, so the model can copy it exactly."""
    lines = text.splitlines()
    wanted = old.strip("\n").splitlines() or [old]
    width = len(wanted)
    head = wanted[0].strip()
    candidates = [i for i, line in enumerate(lines) if line.strip() == head] or [
        i
        for i, line in enumerate(lines)
        if difflib.SequenceMatcher(None, line.strip(), head).quick_ratio() > 0.6
    ]
    best, best_ratio = None, 0.0
    target = "\n".join(w.strip() for w in wanted)
    for i in candidates[:200]:
        window = "\n".join(w.strip() for w in lines[i : i + width])
        ratio = difflib.SequenceMatcher(None, window, target).ratio()
        if ratio > best_ratio:
            best, best_ratio = i, ratio
    message = f"old_string was not found in {rel}."
    if best is not None and best_ratio > 0.5:
        shown = numbered(lines[best : best + width], best + 1)
        why = (
            " The lines differ only in whitespace or indentation."
            if "\n".join(lines[best : best + width]).split() == old.split()
            else ""
        )
        message += (
            f" The closest text is at line {best + 1}:{why}\n{shown}\n"
            "Copy it exactly (without the line-number prefix) into old_string."
        )
    else:
        message += " Read the file with file_read and copy the exact text into old_string."
    return message
