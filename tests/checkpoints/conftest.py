"""Fixtures: the fake LLM server and a small git project with a few commits."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.cli.conftest import server  # noqa: F401 (the faces' fake LLM server)


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    git(root, "init", "-q")
    (root / "app.py").write_text("def main():\n    return 1\n")
    (root / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "run.sh").chmod(0o755)
    (root / "notes.txt").write_bytes(b"line one\r\nline two\r\n")  # CRLF kept as is
    (root / ".gitignore").write_text("build/\n")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "init")
    git(root, "stash", "list")
    return root


def repo_state(root: Path) -> dict[str, str]:
    """What must not change in the person's repo: objects, refs, stash, index."""
    return {
        "objects": git(root, "count-objects", "-v"),
        "refs": git(root, "for-each-ref"),
        "stash": git(root, "stash", "list"),
        "index": (root / ".git" / "index").read_bytes().hex(),
    }


def tree_state(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under root (but .git) with its bytes and mode."""
    found = {}
    for path in sorted(root.rglob("*")):
        if ".git" in path.relative_to(root).parts or not path.is_file():
            continue
        found[path.relative_to(root).as_posix()] = (path.read_bytes(), path.stat().st_mode)
    return found
