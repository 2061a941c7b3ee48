"""External MCP tools as Loom tools: `mcp__<server>__<tool>` with the server's schema.

They go through the permission policy like any built-in tool: risk "execute" (ask unless
granted or auto-approved); an `allow always` answer covers every call of that one tool.
When all servers' definitions cost more than `[mcp] tool_tokens`, the tools are offered
compactly (one-line description, open schema) and `mcp_tool_schema` gives the full schema
of the tools the model asks about, which from then on are offered in full.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Protocol

from loom.tools.base import Risk, SubjectKind, ToolContext, ToolError, ToolResult
from loom.tools.presentation import ToolPresentation, plain_presentation


class McpHub(Protocol):
    """What the tools need of loom.mcp_client.hub.McpHub (which imports this module)."""

    compact: bool

    def tool(self, name: str) -> McpTool | None: ...

    def tool_names(self) -> list[str]: ...

    async def call(
        self, tool: McpTool, args: dict[str, Any], ctx: ToolContext | None = None
    ) -> ToolResult: ...


MAX_NAME = 64  # what the model APIs accept for a tool name
OPEN_SCHEMA: dict[str, Any] = {"type": "object", "additionalProperties": True}


def tool_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>` with characters the model APIs reject replaced by `_`, and
    long names shortened with a hash so they stay unique."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", f"mcp__{server}__{tool}")
    if len(name) > MAX_NAME:
        digest = hashlib.sha1(name.encode()).hexdigest()[:8]
        name = f"{name[: MAX_NAME - 9]}_{digest}"
    return name


def object_schema(schema: Any) -> dict[str, Any]:
    """The server's input schema, made a valid object schema if it is not one."""
    if not isinstance(schema, dict):
        return {"type": "object", "properties": {}}
    schema = dict(schema)
    schema["type"] = "object"
    if not isinstance(schema.get("properties"), dict):
        schema["properties"] = {}
    return schema


def one_line(text: str | None, limit: int = 120) -> str:
    line = (text or "").strip().split("\n", 1)[0].strip()
    return line if len(line) <= limit else line[: limit - 1] + "…"


class McpTool:
    risk: Risk = "execute"
    subject_kind: SubjectKind = "exact"

    def __init__(self, hub: McpHub, server: str, remote: Any) -> None:
        self.hub = hub
        self.server = server
        self.remote_name: str = remote.name
        self.name = tool_name(server, remote.name)
        self.full_description = (remote.description or remote.title or remote.name).strip()
        self.schema = object_schema(remote.input_schema)
        self.expanded = False  # the model looked the schema up: offer it in full

    @property
    def compact(self) -> bool:
        return self.hub.compact and not self.expanded

    @property
    def description(self) -> str:
        prefix = f"[MCP server {self.server}] "
        if self.compact:
            return prefix + one_line(self.full_description) + " (schema: mcp_tool_schema)"
        return prefix + self.full_description

    @property
    def parameters(self) -> dict[str, Any]:
        return OPEN_SCHEMA if self.compact else self.schema

    def full_spec_json(self) -> str:
        return json.dumps(
            {"name": self.name, "description": self.full_description, "parameters": self.schema}
        )

    def permission_subject(self, args: dict[str, Any]) -> str | None:
        return None  # a grant covers every call of this tool

    def present(self, args: dict[str, Any]) -> ToolPresentation:
        return plain_presentation(self.name, args, title=f"{self.remote_name} ({self.server})")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await self.hub.call(self, args, ctx)


class McpToolSchema:
    """`mcp_tool_schema`: the full definition of MCP tools offered compactly."""

    name = "mcp_tool_schema"
    risk: Risk = "read"
    description = (
        "Get the full description and JSON schema of MCP tools (named mcp__<server>__<tool>) "
        "before calling them. Pass their exact names."
    )
    parameters: dict[str, Any] = {  # noqa: RUF012 - read-only, the Tool protocol's shape
        "type": "object",
        "properties": {
            "names": {"type": "array", "items": {"type": "string"}, "description": "tool names"}
        },
        "required": ["names"],
    }

    def __init__(self, hub: McpHub) -> None:
        self.hub = hub

    def permission_subject(self, args: dict[str, Any]) -> str | None:
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        names = args.get("names")
        if isinstance(names, str):
            names = [names]
        if not isinstance(names, list) or not names:
            raise ToolError('Pass "names": a list of MCP tool names, e.g. ["mcp__github__search"].')
        found, unknown = [], []
        for name in names:
            tool = self.hub.tool(str(name))
            if tool is None:
                unknown.append(str(name))
            else:
                tool.expanded = True
                found.append(tool.full_spec_json())
        if unknown:
            available = ", ".join(self.hub.tool_names())
            found.append(f"No MCP tool named {', '.join(unknown)}; available: {available}")
        return ToolResult("\n".join(found), is_error=not any(t for t in found if t[0] == "{"))
