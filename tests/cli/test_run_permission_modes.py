"""`--permission-mode` through `loom run` and `loom resume` against the fake LLM server."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.loom_cli import lines, loom_in_process

PLAN = [{"content": "Add x.txt with x", "status": "pending"}]


def _tool_result(server: FakeLlmServer, index: int) -> str:
    content = server.requests[index].json["messages"][-1]["content"][0]["content"]
    return content if isinstance(content, str) else json.dumps(content)


def test_plan_mode_refuses_a_write_tells_the_model_and_keeps_the_plan(
    server: FakeLlmServer, project: Path
) -> None:
    write = FakeToolCall("file_write", {"path": "x.txt", "content": "x"})
    todo = FakeToolCall("todo_write", {"todos": PLAN})
    server.add(Turn(tool_calls=[write]), Turn(tool_calls=[todo]), Turn(text="The plan is ready."))
    done = loom_in_process(
        ["run", "-p", "add x", "-o", "stream-json", "--permission-mode", "plan"],
        project,
        server,
    )
    assert done.returncode == 0, done.stderr
    assert not (project / "x.txt").exists()
    events = lines(done.stdout)
    assert events[0]["permissionMode"] == "plan"
    first = server.requests[0].json["messages"][0]["content"]
    text = first if isinstance(first, str) else first[-1]["text"]
    assert text.startswith("add x") and "[plan mode]" in text and "todo_write" in text
    assert "plan mode" in _tool_result(server, 1)  # the refusal the model read
    assert "Add x.txt with x" not in _tool_result(server, 1)
    (todos,) = [e for e in events if e["type"] == "loom.todo_list"]
    assert todos["todos"] == PLAN


def test_accept_edits_writes_without_yes_but_a_command_is_still_refused(
    server: FakeLlmServer, project: Path
) -> None:
    write = FakeToolCall("file_write", {"path": "x.txt", "content": "x"})
    touch = FakeToolCall("shell", {"command": "touch made"})
    server.add(Turn(tool_calls=[write, touch]), Turn(text="done"))
    done = loom_in_process(
        ["run", "-p", "go", "--permission-mode", "acceptEdits", "-o", "json"], project, server
    )
    assert done.returncode == 0, done.stderr
    assert (project / "x.txt").read_text() == "x"
    assert not (project / "made").exists()
    (denial,) = json.loads(done.stdout)["permission_denials"]
    assert denial["tool_name"] == "shell"


def test_yes_is_bypass_permissions(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(text="ok"))
    done = loom_in_process(["run", "-p", "hi", "--yes", "-o", "stream-json"], project, server)
    assert done.returncode == 0, done.stderr
    assert lines(done.stdout)[0]["permissionMode"] == "bypassPermissions"


def test_an_unknown_mode_is_a_usage_error_naming_the_modes(
    server: FakeLlmServer, project: Path
) -> None:
    done = loom_in_process(["run", "-p", "hi", "--permission-mode", "yolo"], project, server)
    assert done.returncode == 2
    assert "unknown permission mode 'yolo'" in done.stderr and "acceptEdits" in done.stderr
    assert server.requests == []


def test_resume_takes_the_mode_too(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(text="first"))
    first = loom_in_process(["run", "-p", "hi", "-o", "json"], project, server)
    assert first.returncode == 0, first.stderr
    thread_id = json.loads(first.stdout)["thread_id"]
    write = FakeToolCall("file_write", {"path": "x.txt", "content": "x"})
    server.add(Turn(tool_calls=[write]), Turn(text="planned"))
    done = loom_in_process(
        ["resume", thread_id, "-p", "add x", "--permission-mode", "plan"], project, server
    )
    assert done.returncode == 0, done.stderr
    assert not (project / "x.txt").exists()
    assert "plan mode" in _tool_result(server, 2)
