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


def test_a_refused_connection_fails_at_once_in_one_line_and_keeps_no_thread(
    project: Path,
) -> None:
    from tests.support.net import free_port

    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    done = loom_in_process(
        ["run", "-p", "hi", "-m", "openai:gpt-5"],
        project,
        None,
        OPENAI_API_KEY="sk-test",
        OPENAI_BASE_URL=url,
    )
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"loom: error: Could not connect to openai at {url}/: connection refused (is the "
        "server running? check the base URL)."
    ]  # no retries, no "continue it with loom resume" for a thread that is not kept
    listed = loom_in_process(["list", "--json"], project, None)
    assert json.loads(listed.stdout) == []


def test_a_provider_error_names_the_provider_once(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(status=400, error_message="bad request body"))
    done = loom_in_process(["run", "-p", "hi", "-m", "openai:gpt-5"], project, server)
    assert done.returncode == 1
    assert "openai returned HTTP 400: bad request body" in done.stderr
    assert "openai: openai" not in done.stderr
    assert json.loads(loom_in_process(["list", "--json"], project, server).stdout) == []

    server.add(Turn(text="fine"), Turn(status=400, error_message="later"))
    assert loom_in_process(["run", "-p", "one"], project, server).returncode == 0
    (kept,) = json.loads(loom_in_process(["list", "--json"], project, server).stdout)
    resumed = loom_in_process(["run", "-p", "two", "--resume", kept["id"]], project, server)
    assert resumed.returncode == 1 and f"loom resume {kept['id']}" in resumed.stderr
    assert len(json.loads(loom_in_process(["list", "--json"], project, server).stdout)) == 1
