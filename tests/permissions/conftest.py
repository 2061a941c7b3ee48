from __future__ import annotations

from pathlib import Path

import pytest

from loom.permissions import GrantStore, PermissionPolicy


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    return root


@pytest.fixture
def store(project: Path) -> GrantStore:
    return GrantStore(project)


@pytest.fixture
def policy(store: GrantStore) -> PermissionPolicy:
    return PermissionPolicy(store)
