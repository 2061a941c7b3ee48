"""The decision graph through `loom run` (a real subprocess) against the fake LLM server:
what one run logs, the next run's model sees; the thread file holds it; bad calls are
tool errors the model can act on."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.cli.test_run import loom
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn


def log_call(**arguments: object) -> FakeToolCall:
    return FakeToolCall("decision_log", arguments)


def thread_file(thread_id: str) -> dict:
    path = Path(os.environ["LOOM_HOME"]) / "data" / "threads" / f"{thread_id}.json"
    return json.loads(path.read_text())


def test_a_second_run_sees_what_the_first_decided(server: FakeLlmServer, project: Path) -> None:
    server.add(
        Turn(tool_calls=[log_call(type="goal", title="Clear login errors", confidence=90)]),
        Turn(
            tool_calls=[
                log_call(type="option", title="Catch in the view", parent="Clear login errors"),
                log_call(type="option", title="Result type", parent="Clear login errors"),
            ]
        ),
        Turn(
            tool_calls=[
                log_call(
                    type="decision",
                    title="Catch AuthError in the view",
                    parent="Catch in the view",
                    edge_type="chosen",
                    confidence=80,
                    description="smallest change that fixes the stack trace",
                ),
            ]
        ),
        Turn(
            tool_calls=[
                log_call(
                    type="action", title="Edit views.py", parent="Catch AuthError in the view"
                ),
            ]
        ),
        Turn(
            tool_calls=[
                log_call(
                    type="outcome",
                    title="Login shows a message",
                    parent="Edit views.py",
                    confidence=95,
                )
            ]
        ),
        Turn(text="Logged."),
    )
    first = loom(["run", "-p", "plan the login fix", "-o", "json"], project, server)
    assert first.returncode == 0, first.stderr
    result = json.loads(first.stdout)
    saved = thread_file(result["thread_id"])
    assert saved["schema_version"] == 2
    graph = saved["decision_graph"]
    assert [n["node_type"] for n in graph["nodes"]] == [
        "goal",
        "option",
        "option",
        "decision",
        "action",
        "outcome",
    ]
    assert {e["edge_type"] for e in graph["edges"]} == {"leads_to", "chosen"}
    tool_results = [m for m in saved["conversation"]["messages"] if m["role"] == "tool"]
    assert all(not m.get("is_error") for m in tool_results), tool_results

    server.add(Turn(text="I see the earlier plan."))
    second = loom(["run", "-p", "carry on"], project, server)
    assert second.returncode == 0, second.stderr
    request = server.requests[-1].json
    system = json.dumps(request.get("system"))
    assert "Active Goals" in system and "Clear login errors" in system
    assert "Catch AuthError in the view" in system


def test_bad_calls_are_tool_errors_that_say_how(server: FakeLlmServer, project: Path) -> None:
    server.add(
        Turn(
            tool_calls=[
                log_call(type="wish", title="x"),
                log_call(type="goal", title="x", confidence=140),
                log_call(type="goal", title="y", parent="D-000000000000"),
            ]
        ),
        Turn(text="ok"),
    )
    done = loom(["run", "-p", "log badly", "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr
    saved = thread_file(json.loads(done.stdout)["thread_id"])
    errors = [m["content"] for m in saved["conversation"]["messages"] if m["role"] == "tool"]
    assert "unknown node type 'wish'" in errors[0] and "goal" in errors[0]
    assert "out of range" in errors[1]
    assert "no node 'D-000000000000'" in errors[2]
    assert "decision_graph" not in saved  # nothing half-logged
