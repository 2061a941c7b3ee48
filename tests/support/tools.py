"""Calling Loom's tools directly, as the session does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loom.tools.base import Tool, ToolContext, ToolRegistry, ToolResult


class Runner:
    """`await run("tool", **args)`: the registry's tool run in `root`; progress reports
    are kept in `.progress`."""

    def __init__(self, registry: ToolRegistry, root: Path) -> None:
        self.registry = registry
        self.progress: list[tuple[float | None, str]] = []
        self.ctx = ToolContext(root, progress=lambda f, m: self.progress.append((f, m)))

    async def __call__(self, tool: str, **args: Any) -> ToolResult:
        found = self.registry.get(tool)
        assert found is not None, tool
        return await found.run(args, self.ctx)


def tool_named(registry: ToolRegistry, name: str) -> Tool:
    """The registry's tool `name`; fails the test when it has none."""
    found = registry.get(name)
    assert found is not None, f"no tool {name} in {registry.names()}"
    return found
