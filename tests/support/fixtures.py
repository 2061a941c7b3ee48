"""Fixtures every test folder can use (registered in tests/conftest.py).

`server`: the fake LLM server (tests/fakes/llm_server.py), empty, one per test.
`cli`: `cli(args, cwd, server, **env)` runs `loom ARGS` in this process
(tests.support.loom_cli.loom_in_process).
`project`: a small git project, `proj/` in the test's tmp_path: `git init` and an
untracked `notes.txt` ("one\\n"). Copied from one template made once per test process.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLlmServer
from tests.support.git import init_repo
from tests.support.loom_cli import Done, loom_in_process


@pytest.fixture
def server() -> Iterator[FakeLlmServer]:
    with FakeLlmServer() as fake:
        yield fake


@pytest.fixture(scope="session")
def project_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `project` every test copies (never handed to a test: copies only)."""
    return init_repo(tmp_path_factory.mktemp("template") / "proj", {"notes.txt": "one\n"})


@pytest.fixture
def project(tmp_path: Path, project_template: Path) -> Path:
    root = tmp_path / "proj"
    shutil.copytree(project_template, root, symlinks=True)
    return root


@pytest.fixture
def cli() -> Callable[..., Done]:
    return loom_in_process
