"""`shell_output` and `shell_kill`: read and end the session's background commands
(started by `shell` with `background: true`; loom.tools.background)."""

from __future__ import annotations

from typing import Any

from loom.tools.background import MAX_WAIT_S, BackgroundCommands
from loom.tools.base import Risk, ToolContext, ToolResult
from loom.tools.builtin import BuiltinTool, schema


class ShellOutput(BuiltinTool):
    name = "shell_output"
    description = "A background command's new output, state and exit code."
    parameters = schema(
        {
            "id": {"type": "string"},
            "filter": {"type": "string", "description": "Regex: matching lines only."},
            "wait": {"type": "number", "description": f"Seconds, <= {MAX_WAIT_S:g}."},
        },
        required=("id",),
    )
    risk: Risk = "read"  # reads what a command already running printed
    kind = "read"

    def __init__(self, project_root: Any, background: BackgroundCommands) -> None:
        super().__init__(project_root)
        self.background = background

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            wait = max(0.0, float(args.get("wait") or 0))
        except (TypeError, ValueError):
            raise self.fail("wait is a number of seconds") from None
        text = await self.background.read(str(args["id"]), pattern=args.get("filter"), wait=wait)
        return ToolResult(text)


class ShellKill(BuiltinTool):
    name = "shell_kill"
    description = "End a background command and its process group."
    parameters = schema({"id": {"type": "string"}}, required=("id",))
    risk: Risk = "read"  # ends only a command this session started; changes no file
    kind = "execute"

    def __init__(self, project_root: Any, background: BackgroundCommands) -> None:
        super().__init__(project_root)
        self.background = background

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult(await self.background.kill(str(args["id"])))
