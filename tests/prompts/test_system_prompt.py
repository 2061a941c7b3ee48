"""The system prompt: one text file per family, the environment block, instructions."""

from __future__ import annotations

import datetime as dt
import subprocess
from pathlib import Path

import pytest

from loom.prompts import FAMILIES, base_prompt, build_system_prompt, detect_environment, family_of


@pytest.mark.parametrize(
    ("provider", "model", "family"),
    [
        ("anthropic", "claude-sonnet-4-6", "anthropic"),
        ("openai", "gpt-5", "openai"),
        ("google", "gemini-2.5-pro", "gemini"),
        ("openai-compatible", "qwen2.5-coder:7b", "local"),
        ("openai-compatible", "anthropic/claude-sonnet-4-6", "anthropic"),
        ("openai-compatible", "google/gemini-2.5-flash", "gemini"),
        ("some-plugin", "mystery", "openai"),
    ],
)
def test_family_of(provider: str, model: str, family: str) -> None:
    assert family_of(provider, model) == family


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_has_its_file_with_the_working_rules(family: str) -> None:
    text = base_prompt(family)
    for rule in ("todo_write", "Read", "test", "never", "changed"):
        assert rule.lower() in text.lower(), (family, rule)
    assert len({base_prompt(f) for f in FAMILIES}) == len(FAMILIES)  # variants differ


def test_environment_block(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "trunk", str(tmp_path)], check=True)
    (tmp_path / "new.txt").write_text("x")
    env = detect_environment(tmp_path, sandbox="run sandboxed (bubblewrap)", network="off",
                             today=dt.date(2026, 1, 2))  # fmt: skip
    text = env.render()
    assert f"Working folder: {tmp_path}" in text
    assert "Today's date: 2026-01-02" in text
    assert "Git: branch trunk, 1 changed path(s)" in text and "?? new.txt" in text
    assert "Commands: run sandboxed (bubblewrap); network off" in text
    assert "Platform: " in text and "shell: " in text


def test_environment_outside_git(tmp_path: Path) -> None:
    assert "Git: not a git repository" in detect_environment(tmp_path).render()


def test_build_order(tmp_path: Path) -> None:
    env, instructions = "# Environment\n- here", "# Project instructions\nX"
    text = build_system_prompt("local", env, instructions, "EXTRA")
    assert text.startswith(base_prompt("local"))
    assert text.index("# Environment") < text.index("EXTRA") < text.index("# Project instr")


def test_the_sandbox_line_says_how_commands_run_and_whether_they_have_the_network() -> None:
    from types import SimpleNamespace

    from loom.config import LoomConfig
    from loom.session.workspace.workspace import sandbox_summary

    config = LoomConfig()
    missing = SimpleNamespace(active=False, problem="bubblewrap is not installed")
    assert sandbox_summary(missing, config) == (
        "run without a sandbox (bubblewrap is not installed); they may ask first",
        "on",
    )
    assert sandbox_summary(None, config)[1] == "on"
    active = SimpleNamespace(active=True, backend=SimpleNamespace(name="bubblewrap"))
    how, network = sandbox_summary(active, config)
    assert how.startswith("run sandboxed (bubblewrap)") and network.startswith("off")
    config.sandbox.network = True
    assert sandbox_summary(active, config)[1] == "on"
