"""Fixtures for the sandbox tests: a layout where the project,
the system temp folder and an "outside" folder are separate (pytest's own temp folder
would otherwise be the writable system temp)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.git import init_repo
from tests.support.sandbox import Layout, require_sandbox


@pytest.fixture
def layout(tmp_path: Path, loom_home: Path) -> Layout:
    require_sandbox()
    project = init_repo(tmp_path / "proj")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("original\n")
    systmp = tmp_path / "systmp"
    systmp.mkdir()
    return Layout(project, outside, systmp, loom_home)
