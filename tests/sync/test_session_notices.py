"""Sync trouble reaches the person: a push the server refuses becomes a `sync_error`
event in the session's stream (here: `loom run --output-format stream-json`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.fakes.llm_server import FakeLlmServer, Turn
from tests.support.loom_cli import Done, loom_in_process
from tests.support.sync import Server


def _loom(args: list[str], cwd: Path, **env: str) -> Done:
    return loom_in_process(args, cwd, None, **env)


def test_revoked_token_shows_up_as_a_sync_error_event(server: Server, tmp_path: Path) -> None:
    token = server.token()
    login = _loom(["login", "--server", server.url, "--token", token], tmp_path)
    assert login.returncode == 0, login.stderr
    revoke = _loom(
        ["server", "revoke-token", token], tmp_path, LOOM_DATABASE_URL=server.database_url
    )
    assert revoke.returncode == 0, revoke.stderr

    # A model that takes a moment, as real ones do: the refused push (of the save at the
    # turn's start, which the writer may hold for up to 10 ms) lands while the turn runs.
    with FakeLlmServer([Turn(text="done", delay=0.5)]) as llm:
        run = _loom(
            ["run", "-p", "hello", "--output-format", "stream-json"],
            tmp_path,
            ANTHROPIC_API_KEY="test-key",
            ANTHROPIC_BASE_URL=llm.anthropic_base_url,
        )
    assert run.returncode == 0, run.stderr
    events = [json.loads(line) for line in run.stdout.splitlines()]
    sync_errors = [e for e in events if e["type"] == "loom.sync_error"]
    assert sync_errors, [e["type"] for e in events]
    thread_id = events[-1].get("thread_id") or sync_errors[0]["thread_id"]
    assert sync_errors[0]["thread_id"] == thread_id
    assert "token" in sync_errors[0]["message"].lower()
    # the thread is safe on this machine and queued for when the token is fixed
    status = _loom(["sync", "--json"], tmp_path)
    assert thread_id in (Path(os.environ["LOOM_HOME"]) / "state/sync/pending.json").read_text()
    assert status.returncode == 1
