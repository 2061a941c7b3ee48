"""`todo_write`: the agent keeps a short plan; every face shows it as a checklist.

The whole list on every call (Claude Code's shape). The tool changes nothing but the
session's own list, so it never asks. The session takes the list from the result's
metadata (`TODOS_KEY`), keeps it in the thread and publishes it to the faces.
"""

from __future__ import annotations

from typing import Any

from loom.core.todos import MAX_TODOS, STATUSES, TodoError, checklist, parse_todos, progress
from loom.tools.base import Risk, ToolContext, ToolError, ToolResult
from loom.tools.builtin import BuiltinTool, schema
from loom.tools.presentation import ToolPresentation

TODOS_KEY = "todos"  # ToolResult.metadata key: the new list, as dicts
SUBJECT_CHARS = 120


class TodoWrite(BuiltinTool):
    name = "todo_write"
    description = (
        "The task's checklist, shown to the person; send the WHOLE list each time. For "
        "3+ steps: one item in_progress, completed when done; add steps you find."
    )
    parameters = schema(
        {
            "todos": {
                "type": "array",
                "description": f"At most {MAX_TODOS} items.",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string"},
                        "status": {"type": "string", "enum": list(STATUSES)},
                    },
                    "required": ["content", "status"],
                },
            }
        },
        required=("todos",),
    )
    risk: Risk = "read"  # only the session's own list changes
    parallel_safe = False  # two lists in one answer must land in the order they were sent

    def present(self, args: dict[str, Any]) -> ToolPresentation:
        """The call as its items (`1/2 done: [x] Read notes · [~] Answer`), never as
        the list's JSON: the line a face shows for it."""
        try:
            items = parse_todos(args.get("todos"))
        except TodoError:
            return super().present(args)  # the run says what is wrong with it
        said = " · ".join(checklist(items).splitlines())
        subject = f"{progress(items)}: {said}" if items else "cleared"
        return ToolPresentation(title="Todo list", kind=self.kind, subject=_cut(subject))

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if isinstance(args, dict) and isinstance(args.get("todos"), str):
            args = {**args, "todos": _as_list(args["todos"])}  # sent as a JSON string
        return await super().run(args, ctx)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            items = parse_todos(args["todos"])
        except TodoError as exc:
            raise self.fail(str(exc)) from None
        doing = sum(item.status == "in_progress" for item in items)
        text = (
            f"Todo list updated ({progress(items)}):\n{checklist(items)}"
            if items
            else ("Todo list cleared.")
        )
        if doing > 1:
            text += f"\nNote: {doing} items are in_progress; keep exactly one in progress."
        metadata = {TODOS_KEY: [item.model_dump() for item in items]}
        return ToolResult(text, metadata=metadata)


def _as_list(text: str) -> Any:
    import json

    try:
        return json.loads(text)
    except ValueError:
        raise ToolError(
            "todo_write: `todos` must be a JSON array of {content, status} objects, not a "
            "string that is not JSON"
        ) from None


def _cut(text: str, limit: int = SUBJECT_CHARS) -> str:
    """`text` within `limit` characters, cut between words."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    space = head.rfind(" ")
    return (head[:space] if space > limit // 2 else head).rstrip(" ·") + "…"
