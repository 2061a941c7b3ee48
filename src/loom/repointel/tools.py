"""The agent's tools over repo intelligence: `repo_map` and `symbol_search`."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from loom.repointel.service import RepoIntel
from loom.repointel.settings import RepoSettings
from loom.tools.base import ToolContext, ToolError, ToolResult, ToolSetup
from loom.tools.builtin import BuiltinTool, schema


class _RepoTool(BuiltinTool):
    risk = "read"

    def __init__(
        self, project_root: Path | None = None, settings: RepoSettings | None = None
    ) -> None:
        super().__init__(project_root)
        self.settings = settings

    def intel(self, ctx: ToolContext) -> RepoIntel:
        """The session's RepoIntel (ctx.services.repointel) or the shared one per root."""
        intel = ctx.services.repointel
        if isinstance(intel, RepoIntel):
            return intel
        return RepoIntel.for_root(Path(ctx.project_root), self.settings)


class RepoMapTool(_RepoTool):
    name = "repo_map"
    kind = "search"
    description = (
        "The project's key files and definitions, ranked (higher: what your files and "
        "names use), to find where things live."
    )
    parameters = schema(
        {
            "tokens": {
                "type": "integer",
                "minimum": 64,
                "maximum": 32000,
            },
            "focus_files": {
                "type": "array",
                "items": {"type": "string"},
                "default": [],
                "description": "Files you work on.",
            },
            "mentioned_identifiers": {
                "type": "array",
                "items": {"type": "string"},
                "default": [],
            },
        }
    )

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        intel = self.intel(ctx)
        text = await asyncio.to_thread(
            intel.repo_map, args.get("tokens"), args["focus_files"], args["mentioned_identifiers"]
        )
        if not text:
            return ToolResult(
                "(no source files with definitions were found in this project)",
                metadata={"files": 0},
            )
        return ToolResult(
            text, metadata={"files": sum(1 for line in text.splitlines() if line.endswith(":"))}
        )


class SymbolSearchTool(_RepoTool):
    name = "symbol_search"
    kind = "search"
    description = "Where a function, class, method or constant is defined, by name or prefix."
    parameters = schema(
        {
            "query": {
                "type": "string",
                "minLength": 1,
            },
            "exact": {"type": "boolean", "default": False},
            "limit": {"type": "integer", "minimum": 1, "maximum": 500, "default": 50},
        },
        required=("query",),
    )

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        query = args["query"].strip()
        if not query:
            raise self.fail("query is blank; give a symbol name or prefix")
        intel = self.intel(ctx)
        hits = await asyncio.to_thread(intel.symbol_search, query, args["limit"] + 1, args["exact"])
        if not hits:
            raise ToolError(
                f"no definition named {query!r} (or starting with it) in the "
                "project; try a shorter prefix or content_search for text"
            )
        more = len(hits) > args["limit"]
        hits = hits[: args["limit"]]
        lines = [f"{h.path}:{h.line}  {h.kind}  {h.name}  —  {h.text}" for h in hits]
        if more:
            lines.append(f"(more than {args['limit']} matches; give a longer prefix)")
        return ToolResult("\n".join(lines), metadata={"matches": len(hits)})


def repointel_tools(
    project_root: Path | None = None, settings: RepoSettings | None = None
) -> list[BuiltinTool]:
    return [RepoMapTool(project_root, settings), SymbolSearchTool(project_root, settings)]


def provide(setup: ToolSetup) -> list[BuiltinTool]:
    """The tool extension hook: repo_map and symbol_search, set up from [repo]."""
    settings = RepoSettings.from_section(setup.config.repo) if setup.config else None
    return repointel_tools(setup.project_root, settings)
