"""Secrets never leave through the agent's commands (issue 16, item 6), end to end:
`loom run` in a subprocess against the fake LLM server; the model calls `env`.

First line: the shell and git tools get no secret variables unless `[shell] pass_env`
names them. Second line: any known secret value in a message is masked as
`[redacted:NAME]` before the thread is saved and before the next model request.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.loom_cli import loom_in_process

KEYS = {
    "ANTHROPIC_API_KEY": "sk-ant-test-4f1c9e2b7a55d0c3",
    "OPENAI_API_KEY": "sk-openai-test-9d8e7f6a5b4c",
    "GITHUB_TOKEN": "ghp_testtoken0123456789abcdef",
    "AWS_SECRET_ACCESS_KEY": "aws-secret-test-55aa77bb99",
    "DATABASE_URL": "postgres://loom:pg-pass-test-31337@db.example/loom",
    "MY_SERVICE_PASSWORD": "hunter2-test-password",
}
PLAIN = {"LOOM_TEST_PLAIN_SETTING": "visible-plain-value-123"}


def _thread(thread_id: str) -> str:
    path = Path(os.environ["LOOM_HOME"]) / "data" / "threads" / f"{thread_id}.json"
    return path.read_text()


def _run_env_call(
    server: FakeLlmServer, project: Path, command: str, *flags: str
) -> tuple[dict, str]:
    server.add(Turn(tool_calls=[FakeToolCall("shell", {"command": command})]))
    server.add(Turn(text="done"))
    done = loom_in_process(
        ["run", "-p", "show the environment", "--yes", "--output-format", "json", *flags],
        project,
        server,
        **KEYS,
        **PLAIN,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    return result, _thread(result["thread_id"])


def test_env_shows_no_secret_to_the_model_or_the_thread(
    server: FakeLlmServer, project: Path
) -> None:
    _, thread = _run_env_call(server, project, "env")
    follow_up = json.dumps(server.requests[1].json)
    assert PLAIN["LOOM_TEST_PLAIN_SETTING"] in follow_up  # the command really ran
    for name, value in KEYS.items():
        assert value not in thread, name
        assert value not in follow_up, name
        assert f"{name}=" not in follow_up, name  # the variable is gone, not only masked


def test_pass_env_lets_a_command_use_a_key_but_its_value_is_masked(
    server: FakeLlmServer, project: Path
) -> None:
    (project / ".loom.toml").write_text('[shell]\npass_env = ["GITHUB_*"]\n')
    _, thread = _run_env_call(
        server, project, "echo token=$GITHUB_TOKEN; env | sort", "--trust"
    )  # pass_env from a project file applies once it is trusted
    follow_up = json.dumps(server.requests[1].json)
    assert "token=[redacted:GITHUB_TOKEN]" in follow_up
    assert "token=[redacted:GITHUB_TOKEN]" in thread
    for value in KEYS.values():
        assert value not in thread and value not in follow_up


def test_a_key_read_from_a_file_is_masked(server: FakeLlmServer, project: Path) -> None:
    (project / ".env").write_text(f"OPENAI_API_KEY={KEYS['OPENAI_API_KEY']}\n")
    server.add(Turn(tool_calls=[FakeToolCall("file_read", {"path": ".env"})]))
    server.add(Turn(text="read it"))
    done = loom_in_process(
        ["run", "-p", "read .env", "--output-format", "json"], project, server, **KEYS
    )
    assert done.returncode == 0, done.stderr
    thread = _thread(json.loads(done.stdout)["thread_id"])
    follow_up = json.dumps(server.requests[1].json)
    assert "[redacted:OPENAI_API_KEY]" in follow_up and "[redacted:OPENAI_API_KEY]" in thread
    assert KEYS["OPENAI_API_KEY"] not in follow_up + thread
