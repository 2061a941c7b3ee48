"""Saved grants and deny rules reach the agent: `loom run` (in process) against the
fake LLM server, with real tools on a real project."""

from __future__ import annotations

from pathlib import Path

import pytest

from loom.permissions import GrantStore
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.git import init_repo
from tests.support.loom_cli import loom_in_process


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return init_repo(tmp_path / "repo", {"notes.txt": "keep me\n"})


def _shell_turn(server: FakeLlmServer, command: str) -> None:
    server.add(Turn(tool_calls=[FakeToolCall("shell", {"command": command})]))
    server.add(Turn(text="done"))


def test_saved_grant_allows_its_prefix_only(server: FakeLlmServer, repo: Path) -> None:
    GrantStore(repo).add("shell", "prefix", "touch")
    _shell_turn(server, "touch made.txt")
    done = loom_in_process(["run", "-p", "make it"], repo, server)
    assert done.returncode == 0, done.stderr
    assert (repo / "made.txt").exists()

    _shell_turn(server, "touch other.txt; rm notes.txt")
    done = loom_in_process(["run", "-p", "sneak"], repo, server)
    assert "refused shell" in done.stderr
    assert (repo / "notes.txt").exists() and not (repo / "other.txt").exists()

    revoked = loom_in_process(["permissions", "revoke", "--all"], repo, server)
    assert revoked.returncode == 0 and "Revoked 1 grant." in revoked.stdout
    _shell_turn(server, "touch again.txt")
    done = loom_in_process(["run", "-p", "again"], repo, server)
    assert "refused shell" in done.stderr and not (repo / "again.txt").exists()


def test_config_deny_rule_beats_yes(server: FakeLlmServer, repo: Path) -> None:
    (repo / ".loom.toml").write_text('[permissions]\ndeny = ["file_read:notes.txt"]\n')
    server.add(Turn(tool_calls=[FakeToolCall("file_read", {"path": "notes.txt"})]))
    server.add(Turn(text="could not"))
    done = loom_in_process(["run", "-p", "read", "--yes"], repo, server)
    assert done.returncode == 0, done.stderr
    assert "refused file_read" in done.stderr and "denied by rule" in done.stderr
    tool_result = server.requests[1].json["messages"][-1]["content"][0]
    assert "keep me" not in tool_result["content"]
