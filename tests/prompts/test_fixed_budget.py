"""Issue 22's budget: the fixed part of every request (family prompt, environment block
and the specs of every tool a real session offers) stays under ~3k tokens per family.

A count, not a timing: it fails when a tool or prompt grows past the budget."""

from __future__ import annotations

import datetime as dt
import subprocess
from pathlib import Path

import pytest

from loom.config import load_config
from loom.llm.tokens import estimate_tokens, estimate_tool_specs_tokens
from loom.prompts import FAMILIES, Family, build_system_prompt, detect_environment
from loom.session import Workspace
from tests.support.sandbox import require_sandbox
from tests.support.tools import tool_named

# ~3k, plus the ~150 tokens of background commands (issue 36: shell's `background`,
# shell_output, shell_kill), measured at 3,130 for the largest family.
BUDGET = 3_150
# A session's set: built-ins, repo intelligence, language servers, decisions, task.
SESSION_TOOLS = {"file_read", "shell", "shell_output", "shell_kill", "git", "todo_write",
                 "web_fetch", "repo_map", "symbol_search", "lsp_diagnostics", "lsp_definition",
                 "lsp_references", "lsp_hover", "decision_log", "decision_query",
                 "task"}  # fmt: skip


@pytest.fixture(scope="module")
def session_specs_tokens(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """A fresh project's session tool set, as `Workspace.confined_tools` builds it for
    every session: (the project, its specs' tokens)."""
    require_sandbox()  # a sandboxed shell describes its limits: the larger spec
    project = tmp_path_factory.mktemp("budget") / "a-project-with-a-longish-name"
    project.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
    (project / "app.py").write_text("def main() -> None:\n    pass\n")
    _, sandbox, tools = Workspace(load_config(project)).confined_tools(project, "s-1")
    assert sandbox.active
    assert set(tools.names()) >= SESSION_TOOLS
    assert "network" in tool_named(tools, "shell").parameters["properties"]  # the sandbox's note
    return project, estimate_tool_specs_tokens(tools.specs())


@pytest.mark.parametrize("family", FAMILIES)
def test_prompt_and_a_sessions_tool_specs_fit_the_budget(
    session_specs_tokens: tuple[Path, int], family: Family
) -> None:
    project, specs = session_specs_tokens
    env = detect_environment(project, sandbox="run sandboxed (bubblewrap)", network="off",
                             today=dt.date(2026, 11, 26))  # fmt: skip
    fixed = estimate_tokens(build_system_prompt(family, env))
    assert fixed + specs <= BUDGET, f"{family}: prompt {fixed} + tool specs {specs}"
