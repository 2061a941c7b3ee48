"""The hook tests' project: a git repository with a quiet `.loom.toml`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.config_files import quiet_project


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return quiet_project(tmp_path)
