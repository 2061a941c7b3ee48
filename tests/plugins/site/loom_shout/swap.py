"""A plugin tool that edits files (entry point `swap` in `loom.tools`): it says how its
calls are shown through `present`, and no face knows its name."""

from __future__ import annotations

from typing import Any, ClassVar

from loom.tools.base import ToolContext, ToolError, ToolResult, ToolSetup
from loom.tools.presentation import EditPreview, ToolPresentation


class SwapWord:
    name = "swap_word"
    description = "Replace every `old` word with `new` in the file at `path`."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"path": {"type": "string"}, "old": {"type": "string"},
                       "new": {"type": "string"}},
        "required": ["path", "old", "new"],
    }  # fmt: skip
    risk = "write"
    subject_kind = "path"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        target = ctx.project_root / args["path"]
        text = target.read_text(encoding="utf-8")
        if args["old"] not in text:
            raise ToolError(f"{args['old']!r} is not in {args['path']}")
        target.write_text(text.replace(args["old"], args["new"]), encoding="utf-8")
        return ToolResult(f"swapped {args['old']} for {args['new']} in {args['path']}")

    def permission_subject(self, args: dict[str, Any]) -> str | None:
        return str(args.get("path", "")) or None

    def present(self, args: dict[str, Any]) -> ToolPresentation:
        path = str(args.get("path", ""))
        preview = EditPreview(path, str(args.get("new", "")), str(args.get("old", "")), True)
        return ToolPresentation(
            title=f"Swap words in {path}", kind="edit", subject=path, path=path,
            edits_files=True, preview=preview,
        )  # fmt: skip


def provide(setup: ToolSetup) -> list[SwapWord]:
    return [SwapWord()]
