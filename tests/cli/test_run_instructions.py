"""`loom run` against the fake LLM server: the system prompt per model family with its
environment block, AGENTS.md / CLAUDE.md / LOOM.md / the person's file reaching the model,
nested folders' files on first use, and the header saying what was loaded."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.loom_cli import Done
from tests.support.wire import system_of, tool_results

from loom.prompts import base_prompt


def test_agents_md_and_environment_reach_the_model(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    (project / "AGENTS.md").write_text("Run `make check` before you say done.\n")
    (project / "LOOM.md").write_text("Use tabs.\n")
    server.add(Turn(text="ok"))
    done = cli(["run", "-p", "hi", "-o", "stream-json"], project, server)
    assert done.returncode == 0, done.stderr
    system = system_of(server.requests[0])
    assert system.startswith(base_prompt("anthropic"))
    assert "# Environment" in system and f"Working folder: {project}" in system
    assert "Git: branch " in system and "Commands: " in system
    assert "## AGENTS.md\n\nRun `make check`" in system and "## LOOM.md\n\nUse tabs." in system
    assert "loom: instructions: AGENTS.md, LOOM.md" in done.stderr
    init = json.loads(done.stdout.splitlines()[0])
    assert init["instructions"] == ["AGENTS.md", "LOOM.md"]


def test_each_family_gets_its_own_prompt(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    (project / "CLAUDE.md").write_text("Claude file applies.\n")
    env = {"GEMINI_API_KEY": "test-key", "GOOGLE_GEMINI_BASE_URL": server.google_base_url,
           "OPENAI_COMPATIBLE_BASE_URL": server.openai_base_url,
           "OPENAI_COMPATIBLE_API_KEY": "k"}  # fmt: skip
    for model, family in [("openai:gpt-5", "openai"), ("google:gemini-2.5-flash", "gemini"),
                          ("openai-compatible:qwen2.5-coder", "local")]:  # fmt: skip
        server.add(Turn(text="ok"))
        done = cli(["run", "-p", "hi", "--model", model], project, server, **env)
        assert done.returncode == 0, done.stderr
        system = system_of(server.requests[-1])
        assert system.startswith(base_prompt(family)), model
        assert "Claude file applies." in system


def test_user_file_applies_everywhere(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path, loom_home: Path
) -> None:
    (loom_home / "config").mkdir(exist_ok=True)
    (loom_home / "config" / "AGENTS.md").write_text("Always answer in French.\n")
    server.add(Turn(text="ok"))
    done = cli(["run", "-p", "hi"], project, server)
    assert done.returncode == 0, done.stderr
    assert "Always answer in French." in system_of(server.requests[0])
    assert "yours, for every project" in done.stderr


def test_nested_agents_md_arrives_with_the_first_read_under_its_folder(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    (project / "pkg").mkdir()
    (project / "pkg" / "AGENTS.md").write_text("pkg: tests run with tox.\n")
    (project / "pkg" / "a.py").write_text("A = 1\n")
    (project / "pkg" / "b.py").write_text("B = 2\n")
    server.add(Turn(tool_calls=[FakeToolCall("file_read", {"path": "pkg/a.py"})]))
    server.add(Turn(tool_calls=[FakeToolCall("file_read", {"path": "pkg/b.py"})]))
    server.add(Turn(text="done"))
    done = cli(["run", "-p", "read them", "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr
    assert "pkg: tests run" not in system_of(server.requests[0])
    first, second = tool_results(server.requests[1]), tool_results(server.requests[2])
    mark = "[Loom: instructions from pkg/AGENTS.md, for files under pkg/]"
    assert mark in first[0] and "pkg: tests run with tox." in first[0]
    assert mark not in second[1]  # once per session
    thread_id = json.loads(done.stdout)["thread_id"]
    thread = json.loads(next(Path(os.environ["LOOM_HOME"]).rglob(f"{thread_id}.json")).read_text())
    tools = [m for m in thread["conversation"]["messages"] if m["role"] == "tool"]
    assert mark in tools[0]["content"]


def test_symlinked_agents_md_leading_outside_is_refused(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "id_rsa"
    secret.write_text("-----BEGIN PRIVATE KEY----- hunter2\n")
    os.symlink(secret, project / "AGENTS.md")
    (project / "sub").mkdir()
    os.symlink(secret, project / "sub" / "CLAUDE.md")
    (project / "sub" / "x.py").write_text("x = 1\n")
    server.add(Turn(tool_calls=[FakeToolCall("file_read", {"path": "sub/x.py"})]))
    server.add(Turn(text="ok"))
    done = cli(["run", "-p", "hi"], project, server)
    assert done.returncode == 0, done.stderr
    assert all("hunter2" not in json.dumps(r.json) for r in server.requests)
    assert "not read: AGENTS.md leads outside the project (a symlink)" in done.stderr
    assert (
        "[Loom: sub/CLAUDE.md leads outside the project (a symlink)"
        in (tool_results(server.requests[1])[0])
    )


def test_nested_agents_md_arrives_with_the_first_edit_and_not_again_after_a_resume(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    (project / "pkg").mkdir()
    (project / "pkg" / "AGENTS.md").write_text("pkg: keep __all__ sorted.\n")
    (project / "pkg" / "a.py").write_text("A = 1\n")
    write = FakeToolCall("file_write", {"path": "pkg/new.py", "content": "N = 1\n"})
    server.add(Turn(tool_calls=[write]))
    server.add(Turn(text="done"))
    done = cli(["run", "-p", "add it", "--yes", "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr
    mark = "[Loom: instructions from pkg/AGENTS.md, for files under pkg/]"
    (result,) = tool_results(server.requests[1])
    assert mark in result and "keep __all__ sorted" in result
    # resumed in a new process: the thread already carried pkg's file, it is not sent again
    server.add(Turn(tool_calls=[FakeToolCall("file_read", {"path": "pkg/a.py"})]))
    server.add(Turn(text="ok"))
    thread_id = json.loads(done.stdout)["thread_id"]
    again = cli(["run", "-r", thread_id, "-p", "read a"], project, server)
    assert again.returncode == 0, again.stderr
    results = tool_results(server.requests[-1])
    assert mark in results[0] and mark not in results[-1] and "A = 1" in results[-1]
