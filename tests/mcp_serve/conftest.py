"""The project `loom mcp serve` serves in these tests: a git folder with `a.txt`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.git import init_repo


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    return init_repo(tmp_path / "proj", {"a.txt": "hello from a\n"})
