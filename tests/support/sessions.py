"""Small real tools and a Workspace factory for session tests (only the LLM is scripted)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from loom.config import load_config
from loom.llm.scripted import ScriptedProvider
from loom.session import SessionSpec, Workspace
from loom.tools.base import Risk, Tool, ToolContext, ToolError, ToolResult

ANY_MODEL = "anthropic:claude-sonnet-4-6"


class _Base:
    description = "a test tool"
    # not ClassVar: the Tool protocol reads `parameters` as an instance's (read-only) member
    parameters: dict[str, Any] = {"type": "object", "properties": {}}  # noqa: RUF012
    risk: Risk = "read"

    def permission_subject(self, args: dict[str, Any]) -> str | None:
        return args.get("path")


class EchoTool(_Base):
    name = "echo"
    parameters: dict[str, Any] = {  # noqa: RUF012
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        await ctx.report(0.5, "echoing")
        return ToolResult(f"echo: {args['text']}")


class NoopTool(_Base):
    name = "noop"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult("ok")


class WriteTool(_Base):
    """Writes a file under the project root (risk "write": asks unless approved)."""

    name = "write_file"
    risk: Risk = "write"
    subject_kind = "path"
    parameters: dict[str, Any] = {  # noqa: RUF012
        "type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"],
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        target = ctx.project_root / args["path"]
        if ".." in Path(args["path"]).parts:
            raise ToolError("path must stay inside the project")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(args["content"])
        return ToolResult(f"wrote {args['path']}")


class CrashTool(_Base):
    name = "crash"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise RuntimeError("boom inside the tool")


class HangTool(_Base):
    name = "hang"

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = False

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return ToolResult("never")


def make_workspace(
    project: Path,
    provider: ScriptedProvider | None = None,
    *,
    providers: dict[str, ScriptedProvider] | None = None,
    store: Any = None,
    config: dict[str, Any] | None = None,
    **session_options: Any,
) -> Workspace:
    """A Workspace over the folder `project`, assembled as every face's is (sandbox,
    permission policy, project instructions, MCP, decisions hook), whose sessions talk to
    `provider` (or `providers[model]`). `config`: configuration keys ("repo.map_tokens");
    `store`: a thread store of the test's own; `session_options`: SessionOptions fields
    (timeouts, retries). Sessions take no git snapshots unless asked (`git_snapshot`)."""

    def factory(model: str) -> ScriptedProvider:
        if providers is not None:
            return providers[model]
        assert provider is not None
        return provider

    loaded = load_config(project, config, project_root=project)
    return Workspace(
        loaded,
        provider_factory=factory,
        store=store,
        session_options={"git_snapshot": False, **session_options},
    )


def only(*tools: Tool, **spec: Any) -> SessionSpec:
    """A SessionSpec for a session with exactly `tools` (test tools; no built-ins)."""
    return SessionSpec(extra_tools=tools, tools=[tool.name for tool in tools], **spec)


def kinds(events: list[Any]) -> list[str]:
    return [e.type for e in events]
