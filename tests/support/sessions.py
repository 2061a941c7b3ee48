"""Small real tools and a manager factory for session tests (only the LLM is scripted)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, ClassVar

from loom.llm.scripted import ScriptedProvider
from loom.session import SessionManager, SessionOptions
from loom.store.local import LocalThreadStore
from loom.tools.base import ToolContext, ToolError, ToolResult

ANY_MODEL = "anthropic:claude-sonnet-4-6"


class _Base:
    description = "a test tool"
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}
    risk = "read"

    def permission_subject(self, args: dict[str, Any]) -> str | None:
        return args.get("path")


class EchoTool(_Base):
    name = "echo"
    parameters: ClassVar[dict[str, Any]] = {
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
    risk = "write"
    subject_kind = "path"
    parameters: ClassVar[dict[str, Any]] = {
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


def make_manager(
    provider: ScriptedProvider | None = None,
    *,
    store: Any = None,
    providers: dict[str, ScriptedProvider] | None = None,
    **option_overrides: Any,
) -> SessionManager:
    """A manager whose sessions talk to `provider` (or `providers[model]`)."""

    def factory(model: str) -> ScriptedProvider:
        if providers is not None:
            return providers[model]
        assert provider is not None
        return provider

    options = SessionOptions(rules="", git_snapshot=False)
    for key, value in option_overrides.items():
        setattr(options, key, value)
    return SessionManager(
        store=store or LocalThreadStore(), provider_factory=factory, options=options
    )


def kinds(events: list[Any]) -> list[str]:
    return [e.type for e in events]
