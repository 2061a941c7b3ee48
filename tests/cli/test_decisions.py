"""The decision graph through `loom run` (a real subprocess) against the fake LLM server:
what one run logs, the next run's model sees; the thread file holds it; bad calls are
tool errors the model can act on."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.loom_cli import Done, loom_in_process


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
    first = loom_in_process(["run", "-p", "plan the login fix", "-o", "json"], project, server)
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
    second = loom_in_process(["run", "-p", "carry on"], project, server)
    assert second.returncode == 0, second.stderr
    # the decision zone is in the call's context block, after the conversation
    sent = json.dumps(server.requests[-1].json)
    assert "Active Goals" in sent and "Clear login errors" in sent
    assert "Catch AuthError in the view" in sent


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
    done = loom_in_process(["run", "-p", "log badly", "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr
    saved = thread_file(json.loads(done.stdout)["thread_id"])
    errors = [m["content"] for m in saved["conversation"]["messages"] if m["role"] == "tool"]
    assert "unknown node type 'wish'" in errors[0] and "goal" in errors[0]
    assert "out of range" in errors[1]
    assert "no node 'D-000000000000'" in errors[2]
    assert "decision_graph" not in saved  # nothing half-logged


def run_cmd(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "loom", *args], cwd=cwd, capture_output=True, text=True
    )


def test_commands_list_show_pulse_narrative_export(server: FakeLlmServer, project: Path) -> None:
    server.add(
        Turn(tool_calls=[log_call(type="goal", title="Speed up search")]),
        Turn(
            tool_calls=[
                log_call(
                    type="decision",
                    title="Add a trigram index",
                    parent="Speed up search",
                    confidence=40,
                )
            ]
        ),
        Turn(text="ok"),
    )
    done = loom_in_process(["run", "-p", "x", "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr
    thread_id = json.loads(done.stdout)["thread_id"]

    listed = run_cmd(["decisions", "--json"], project)
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert [r["title"] for r in rows] == ["Add a trigram index", "Speed up search"]
    goal_id = rows[1]["id"]
    only_goals = json.loads(run_cmd(["decisions", "--type", "goal", "--json"], project).stdout)
    assert [r["id"] for r in only_goals] == [goal_id]
    bad = run_cmd(["decisions", "--type", "wish"], project)
    assert bad.returncode == 2 and "unknown node type 'wish'" in bad.stderr

    shown = run_cmd(["decisions", "show", goal_id[:6]], project)
    assert shown.returncode == 0, shown.stderr
    assert "Speed up search" in shown.stdout and "leads_to" in shown.stdout
    missing = run_cmd(["decisions", "show", "D-nothere"], project)
    assert missing.returncode == 1 and "no decision-graph node" in missing.stderr

    pulse = json.loads(run_cmd(["decisions", "pulse", "--json"], project).stdout)
    assert {g["title"] for g in pulse["gaps"]} == {"Speed up search", "Add a trigram index"}
    assert [n["title"] for n in pulse["low_confidence"]] == ["Add a trigram index"]
    assert pulse["health"] < 100
    text = run_cmd(["decisions", "pulse"], project).stdout
    assert "Coverage gaps" in text and "health" in text

    story = run_cmd(["decisions", "narrative", "--thread", thread_id], project)
    assert "set the goal: Speed up search" in story.stdout
    assert "decided: Add a trigram index" in story.stdout
    by_goal = run_cmd(["decisions", "narrative", "--goal", goal_id], project)
    assert "Add a trigram index" in by_goal.stdout

    mermaid = run_cmd(["decisions", "export", "--format", "mermaid"], project).stdout
    assert_mermaid_parses(mermaid, nodes=2, edges=1)
    dot = run_cmd(["decisions", "export", "--format", "dot"], project).stdout
    assert dot.startswith("digraph decisions {") and dot.rstrip().endswith("}")
    as_json = json.loads(run_cmd(["decisions", "export", "--format", "json"], project).stdout)
    assert len(as_json["nodes"]) == 2 and as_json["edges"][0]["edge_type"] == "leads_to"
    wrong = run_cmd(["decisions", "export", "--format", "svg"], project)
    assert wrong.returncode == 2 and "mermaid" in wrong.stderr


MERMAID_NODE = re.compile(
    r'^    (\w+)(\(\[|\{|\[/|\[\[|\[\\|\(|\[)"[^"]*"(\]\)|\}|/\]|\]\]|\\\]|\)|\])$'
)
MERMAID_EDGE = re.compile(r'^    (\w+) (-->|-\.->)\|"([^"|]+)"\| (\w+)$')


def assert_mermaid_parses(text: str, *, nodes: int, edges: int) -> None:
    """A strict line grammar for the flowchart subset the exporter writes."""
    lines = text.splitlines()
    assert lines[0] == "flowchart TD"
    declared: set[str] = set()
    links = 0
    for line in lines[1:]:
        if match := MERMAID_NODE.match(line):
            declared.add(match.group(1))
        elif match := MERMAID_EDGE.match(line):
            assert {match.group(1), match.group(4)} <= declared
            links += 1
        else:
            assert line.startswith(("    class ", "    classDef ")), line
    assert (len(declared), links) == (nodes, edges)


def test_a_confidence_drop_marks_dependants_and_tells_the_session(
    server: FakeLlmServer, project: Path
) -> None:
    server.add(
        Turn(tool_calls=[log_call(type="decision", title="Use SQLite", confidence=90)]),
        Turn(
            tool_calls=[
                log_call(
                    type="decision",
                    title="FTS5 for search",
                    parent="Use SQLite",
                    edge_type="requires",
                )
            ]
        ),
        Turn(
            tool_calls=[
                log_call(
                    type="action",
                    title="Write triggers",
                    parent="FTS5 for search",
                    edge_type="requires",
                )
            ]
        ),
        Turn(text="logged"),
    )
    assert loom_in_process(["run", "-p", "x"], project, server).returncode == 0
    base = json.loads(run_cmd(["decisions", "--json"], project).stdout)[-1]
    assert base["title"] == "Use SQLite"
    server.add(
        Turn(tool_calls=[log_call(node_id=base["id"], confidence=20, rationale="NFS locks")]),
        Turn(text="noted"),
    )
    done = loom_in_process(["run", "-p", "y", "-o", "stream-json"], project, server)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    tool_results = [e for e in events if "now uncertain" in json.dumps(e)]
    assert tool_results, "the model is told which nodes became uncertain"
    pulse = json.loads(run_cmd(["decisions", "pulse", "--json"], project).stdout)
    assert len(pulse["uncertain"]) == 2


def in_process(args: list[str], cwd: Path) -> Done:
    return loom_in_process(args, cwd, None)


def test_export_escapes_edge_types_and_titles_and_lists_cut_long_titles(
    server: FakeLlmServer, project: Path
) -> None:
    long_title = "Refactor the parser " + "x" * 50_000
    server.add(
        Turn(tool_calls=[log_call(type="goal", title=long_title)]),
        Turn(
            tool_calls=[
                log_call(type="decision", title='Say "hi"\n|x| [/] and [bold]', parent=long_title)
            ]
        ),
        Turn(text="ok"),
    )
    done = loom_in_process(["run", "-p", "x", "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr
    # a thread file edited (or synced) by someone else: an edge type that ends the label
    path = Path(os.environ["LOOM_HOME"]) / "data" / "threads"
    path = path / f"{json.loads(done.stdout)['thread_id']}.json"
    saved = json.loads(path.read_text())
    injected = 'leads_to| B\n    click B href "javascript:alert(1)"\n    A -->|x'
    saved["decision_graph"]["edges"][0]["edge_type"] = injected
    path.write_text(json.dumps(saved))

    mermaid = in_process(["decisions", "export"], project).stdout
    assert not any(line.lstrip().startswith("click") for line in mermaid.splitlines())
    assert_mermaid_parses(mermaid, nodes=2, edges=1)
    dot = in_process(["decisions", "export", "--format", "dot"], project).stdout
    assert len(dot.splitlines()) == 3 + 2 + 1 + 1  # header, two nodes, one edge, "}"

    listed = in_process(["decisions"], project)
    assert listed.returncode == 0, listed.stderr
    assert "Refactor the parser" in listed.stdout and "xxx…" in listed.stdout
    assert len(listed.stdout) < 3_000 and "[/] and [bold]" in listed.stdout
    goal = json.loads(in_process(["decisions", "--json"], project).stdout)[-1]
    assert goal["title"] == long_title  # JSON keeps it whole
    shown = in_process(["decisions", "show", goal["id"]], project)
    assert shown.returncode == 0, shown.stderr
    assert len(shown.stdout) < 3_000 and "title cut: 50,020 characters" in shown.stdout
    for command in (["decisions", "pulse"], ["decisions", "narrative", "--goal", goal["id"]]):
        text = in_process(command, project).stdout
        assert "Refactor the parser" in text and len(text) < 3_000, command
