"""Headless runs say on stderr when they retry; a stalled endpoint is retried."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.llm_server import FakeLlmServer, Turn
from tests.support.loom_cli import loom_in_process


def test_text_mode_says_on_stderr_that_it_retries(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(status=529, error_message="overloaded", retry_after=0.05))
    server.add(Turn(text="made it"))
    done = loom_in_process(["run", "-p", "hi"], project, server)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "made it\n"
    assert "retrying in" in done.stderr and "attempt 1" in done.stderr
    assert "overloaded" in done.stderr


def test_a_stalled_stream_is_a_transient_error_and_retried(
    server: FakeLlmServer, project: Path
) -> None:
    (project / ".loom.toml").write_text("[model]\nstall_timeout = 1\n")
    server.add(Turn(text=["Half an ans", "wer that never ends"], stall=8))
    server.add(Turn(text="the whole answer"))
    done = loom_in_process(["run", "-p", "hi", "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "the whole answer"
    assert len(server.requests) == 2


def test_a_bad_stall_timeout_is_a_config_error(server: FakeLlmServer, project: Path) -> None:
    (project / ".loom.toml").write_text("[model]\nstall_timeout = -3\n")
    done = loom_in_process(["run", "-p", "hi"], project, server)
    assert done.returncode == 1
    assert "stall_timeout" in done.stderr
