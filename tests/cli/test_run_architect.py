"""`loom run --architect`: architect mode headless, through the real SDK and the fake
LLM server: the strong model plans, the fast one carries out each step with file tools."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.loom_cli import loom_in_process

PLAN = {
    "summary": "Add a module",
    "steps": [{"file": "a.py", "action": "create", "description": "create a.py with A = 1"}],
}


def test_architect_plans_then_the_editor_writes(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(text=f"My plan:\n```json\n{json.dumps(PLAN)}\n```"))
    write = FakeToolCall("file_write", {"path": "a.py", "content": "A = 1\n"})
    server.add(Turn(tool_calls=[write]))
    server.add(Turn(text="Created a.py."))
    done = loom_in_process(
        ["run", "--architect", "--yes", "-p", "add module a", "-o", "stream-json"], project, server
    )
    assert done.returncode == 0, done.stderr
    assert (project / "a.py").read_text() == "A = 1\n"
    models = [r.json["model"] for r in server.requests]
    assert models == ["claude-opus-4-6", "claude-haiku-4-5", "claude-haiku-4-5"]
    assert server.requests[0].json.get("tools") in (None, [])  # the architect plans, no tools
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    kinds = [line["type"] for line in lines]
    assert "loom.architect_plan" in kinds and "loom.mode_changed" not in kinds[:1]
    result = lines[-1]
    assert result["subtype"] == "success" and "Carried out 1 of 1 steps" in result["result"]
    # the plan is shown as the same todo list as todo_write's, its step moving on
    todos = [line for line in lines if line["type"] == "loom.todo_list"]
    assert {line["source"] for line in todos} == {"architect"}
    step = "[create] a.py: create a.py with A = 1"
    assert [line["todos"] for line in todos] == [
        [{"content": step, "status": status}] for status in ("pending", "in_progress", "completed")
    ]


def test_without_the_flag_the_normal_loop_runs(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(text="plain answer"))
    done = loom_in_process(["run", "-p", "hi"], project, server)
    assert done.returncode == 0 and done.stdout.strip() == "plain answer"
    assert server.requests[0].json["model"] == "claude-sonnet-4-6"


def test_an_openai_user_plans_and_carries_out_with_openai_models(
    server: FakeLlmServer, project: Path
) -> None:
    server.add(Turn(text=f"My plan:\n```json\n{json.dumps(PLAN)}\n```"))
    server.add(Turn(tool_calls=[FakeToolCall("file_write", {"path": "a.py", "content": "A\n"})]))
    server.add(Turn(text="Created a.py."))
    done = loom_in_process(
        ["run", "--architect", "--model", "openai:gpt-4.1", "--yes", "-p", "add module a"],
        project,
        server,
        ANTHROPIC_API_KEY="",
    )
    assert done.returncode == 0, done.stderr
    assert [r.json["model"] for r in server.requests] == ["gpt-5", "gpt-5-mini", "gpt-5-mini"]


def test_a_configured_model_without_a_key_is_found_before_the_turn(
    server: FakeLlmServer, project: Path
) -> None:
    done = loom_in_process(
        ["run", "--architect", "--model", "openai:gpt-4.1", "--yes", "-p", "add module a"],
        project,
        server,
        ANTHROPIC_API_KEY="",
        LOOM_ARCHITECT_MODEL="anthropic:claude-opus-4-6",
    )
    assert done.returncode != 0
    assert server.requests == []  # found before any model call
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr  # said once, and no advice to send it again
    assert "anthropic:claude-opus-4-6 (model.architect" in lines[0]
    assert "No API key for anthropic" in lines[0]
