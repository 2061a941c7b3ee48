"""Fixtures for the sandbox tests: the fake LLM server, and a layout where the project,
the system temp folder and an "outside" folder are separate (pytest's own temp folder
would otherwise be the writable system temp)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLlmServer


def require_sandbox() -> None:
    """Skip where this machine has no sandbox, except in CI, where that is a failure."""
    from loom.sandbox import detect

    detection = detect()
    if detection.backend is None:
        if os.environ.get("CI"):
            pytest.fail(f"no sandbox in CI: {detection.problem}")
        pytest.skip(f"no sandbox here: {detection.problem}")


@pytest.fixture
def server() -> Iterator[FakeLlmServer]:
    with FakeLlmServer() as fake:
        yield fake


@dataclass
class Layout:
    project: Path
    outside: Path  # not writable in the sandbox
    systmp: Path  # the loom process's TMPDIR, so the writable system temp
    loom_home: Path


@pytest.fixture
def layout(tmp_path: Path, loom_home: Path) -> Layout:
    require_sandbox()
    project = tmp_path / "proj"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("original\n")
    systmp = tmp_path / "systmp"
    systmp.mkdir()
    return Layout(project, outside, systmp, loom_home)
