from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from loom.permissions import GrantStore, PermissionPolicy


@dataclass
class StubTool:
    """A tool descriptor: only the attributes the policy reads."""

    name: str
    risk: str
    subject_kind: str = "exact"

    def permission_subject(self, args: dict[str, Any]) -> str | None:
        if self.subject_kind == "command":
            return args["command"]
        return args.get("path") or args.get("subject")


SHELL = StubTool("shell", "execute", "command")
WRITE = StubTool("file_write", "write", "path")
READ = StubTool("file_read", "read", "path")
GIT = StubTool("git", "write", "exact")


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
