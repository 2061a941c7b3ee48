"""Many sessions in one process stay small: one HTTP client per endpoint and key, and no
database handle of their own (stopping them leaves nothing open)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from loom.config import load_config
from loom.llm import clients
from loom.session import SessionSpec, Workspace
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn


def loom_db_handles(database: Path) -> int:
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == str(database):
                count += 1
        except OSError:
            pass
    return count


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts descriptors in /proc")
async def test_fifty_sessions_share_one_client_and_hold_no_database_handle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".loom.toml").write_text("[repo]\nmap_tokens = 0\n")
    (project / "notes.txt").write_text("hello\n")
    with FakeLlmServer() as server:
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        ws = Workspace(load_config(project, {"model.default": "openai:gpt-4.1"}))
        before = clients.client_count()
        spec = SessionSpec(headless=True, cwd=project)
        sessions = [await ws.start_session(spec) for _ in range(50)]
        assert clients.client_count() == before + 1  # was one per session
        # each session does a turn: a tool call (permissions, grants) and the decision zone
        for session in sessions:
            server.add(
                Turn(tool_calls=[FakeToolCall("file_read", {"path": "notes.txt"})]),
                Turn(text="read it"),
            )
            assert await session.send_message("read notes.txt") == "read it"
        database = ws.paths.database
        running = loom_db_handles(database)
        assert running < 10, f"{running} loom.db descriptors for 50 sessions"
        for session in sessions:
            await ws.stop_session(session.id)
        assert loom_db_handles(database) <= running
        await ws.shutdown()
