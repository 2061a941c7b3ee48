from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from loom.session.assembly.toolset import default_registry
from loom.tools.base import ToolContext, ToolRegistry, ToolResult


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    project.mkdir()
    return project


@pytest.fixture
def registry(root: Path) -> ToolRegistry:
    return default_registry(root)


class Runner:
    def __init__(self, registry: ToolRegistry, root: Path) -> None:
        self.registry = registry
        self.progress: list[tuple[float | None, str]] = []
        self.ctx = ToolContext(root, progress=lambda f, m: self.progress.append((f, m)))

    async def __call__(self, tool: str, **args: Any) -> ToolResult:
        found = self.registry.get(tool)
        assert found is not None, tool
        return await found.run(args, self.ctx)


@pytest.fixture
def run(registry: ToolRegistry, root: Path) -> Runner:
    return Runner(registry, root)
