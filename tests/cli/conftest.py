"""Fixtures for the faces' tests: the fake LLM server and a small git project."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.fakes.llm_server import FakeLlmServer

from loom.__main__ import main

ENV = {"ANTHROPIC_API_KEY": "test-key", "OPENAI_API_KEY": "test-key"}


def provider_env(server: FakeLlmServer) -> dict[str, str]:
    return {
        **ENV,
        "ANTHROPIC_BASE_URL": server.anthropic_base_url,
        "OPENAI_BASE_URL": server.openai_base_url,
    }


@pytest.fixture
def server() -> Iterator[FakeLlmServer]:
    with FakeLlmServer() as fake:
        yield fake


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "notes.txt").write_text("one\n")
    return root


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Callable[..., Done]:
    """`loom ARGS` through `loom.__main__.main` in this process (the SDKs load once)."""

    def run(args: list[str], cwd: Path, server: FakeLlmServer, **env: str) -> Done:
        with monkeypatch.context() as patch:
            patch.chdir(cwd)
            for key, value in {**provider_env(server), **env}.items():
                if value:
                    patch.setenv(key, value)
                else:
                    patch.delenv(key, raising=False)
            capsys.readouterr()
            try:
                main(args)
                code = 0
            except SystemExit as exit_:
                code = exit_.code if isinstance(exit_.code, int) else 1
            out, err = capsys.readouterr()
        return Done(code, out, err)

    return run
