"""Real git repositories in temp folders."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.git import init_repo
from tests.support.repointel import FIXTURES


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    return init_repo(tmp_path / "repo")


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """A copy of the fixture repo, as a git repository."""
    root = tmp_path / "shop"
    shutil.copytree(FIXTURES / "shop", root)
    return init_repo(root)
