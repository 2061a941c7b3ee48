"""Agent commands get an environment without secrets (issue 16, item 6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from loom.config import LoomConfig
from loom.session.assembly.toolset import default_registry
from loom.tools._process import tool_env
from loom.tools.agent_env import agent_environ
from loom.tools.base import ToolContext
from tests.support.tools import Runner

ENV = {
    "PATH": "/usr/bin:/bin",
    "OPENAI_API_KEY": "sk-openai-0123456789",
    "GITHUB_TOKEN": "ghp_0123456789abcdef",
    "GITHUB_ACTIONS": "true",
    "AWS_SECRET_ACCESS_KEY": "aws-0123456789",
    "LOOM_DATABASE_URL": "postgresql+asyncpg://loom@localhost/test",
    "DATABASE_URL": "postgres://u:pw-0123456789@h/db",
    "LANG": "C.UTF-8",
}


def test_secret_variables_are_dropped() -> None:
    env = agent_environ(base=ENV)
    assert sorted(env) == ["GITHUB_ACTIONS", "LANG", "PATH"]


def test_pass_env_names_or_globs_keep_them() -> None:
    env = agent_environ(["GITHUB_*", "AWS_SECRET_ACCESS_KEY"], base=ENV)
    assert {"GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY"} <= set(env)
    assert "OPENAI_API_KEY" not in env


def test_tool_env_removes_and_sets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_DIR", "/elsewhere")
    env = tool_env({"GIT_DIR": None, "X_SETTING": "1"})
    assert "GIT_DIR" not in env and env["X_SETTING"] == "1" and env["PAGER"] == "cat"


async def test_the_shell_tool_sees_none_unless_configured(
    run: Runner, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in ENV.items():
        if name != "PATH":
            monkeypatch.setenv(name, value)
    result = await run("shell", command="env")
    assert "LANG=C.UTF-8" in result.content
    for name in ("OPENAI_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "DATABASE_URL"):
        assert f"{name}=" not in result.content

    config = LoomConfig.model_validate({"shell": {"pass_env": ["GITHUB_TOKEN"]}})
    shell = default_registry(root, config).get("shell")
    assert shell is not None
    passed = await shell.run({"command": "env"}, ToolContext(root))
    assert "GITHUB_TOKEN=ghp_0123456789abcdef" in passed.content
    assert "OPENAI_API_KEY=" not in passed.content
