"""`shell_output` and `shell_kill`: read and end the session's background commands
(started by `shell` with `background: true`; loom.tools.background)."""

from __future__ import annotations

from typing import Any

from loom.tools.background import MAX_WAIT_S, BackgroundCommands
from loom.tools.base import Risk, ToolContext, ToolResult
from loom.tools.builtin import BuiltinTool, schema


class ShellOutput(BuiltinTool):
    name = "shell_output"
    description = (
        "What a background command (shell with background: true) printed since the last "
        "read, then its state and exit code. `filter`: only lines matching this regex; "
        f"`wait`: seconds (up to {MAX_WAIT_S:g}) to wait for new output."
    )
    parameters = schema(
        {
            "id": {"type": "string", "description": "The id shell answered with, e.g. b1."},
            "filter": {"type": "string"},
            "wait": {"type": "number", "minimum": 0, "maximum": MAX_WAIT_S},
        },
        required=("id",),
    )
    risk: Risk = "read"  # reads what a command already running printed
    kind = "read"

    def __init__(self, project_root: Any, background: BackgroundCommands) -> None:
        super().__init__(project_root)
        self.background = background

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        text = await self.background.read(
            str(args["id"]), pattern=args.get("filter"), wait=float(args.get("wait") or 0)
        )
        return ToolResult(text)


class ShellKill(BuiltinTool):
    name = "shell_kill"
    description = "End a background command and every process it started (its process group)."
    parameters = schema({"id": {"type": "string"}}, required=("id",))
    risk: Risk = "read"  # ends only a command this session started; changes no file
    kind = "execute"

    def __init__(self, project_root: Any, background: BackgroundCommands) -> None:
        super().__init__(project_root)
        self.background = background

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult(await self.background.kill(str(args["id"])))
