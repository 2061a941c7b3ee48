from __future__ import annotations

from pathlib import Path

import pytest

from loom.session.assembly.toolset import default_registry
from loom.tools.base import ToolRegistry
from tests.support.tools import Runner


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    project.mkdir()
    return project


@pytest.fixture
def registry(root: Path) -> ToolRegistry:
    return default_registry(root)


@pytest.fixture
def run(registry: ToolRegistry, root: Path) -> Runner:
    return Runner(registry, root)
