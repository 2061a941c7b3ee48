"""`loom run` against the fake LLM server: read-only calls of one answer run at the same
time while edits keep their place, and the stuck-loop guard."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.loom_cli import Done, lines
from tests.support.threads import thread_file
from tests.support.wire import tool_results

from loom.cli.chat_render import EventRenderer
from loom.core.events import ToolComplete, ToolExecuting


def test_read_only_calls_run_together_writes_stay_in_order(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    calls = [
        FakeToolCall("git", {"subcommand": "status"}, id="c1"),
        FakeToolCall("git", {"subcommand": "log", "args": ["--oneline", "-3"]}, id="c2"),
        FakeToolCall("git", {"subcommand": "diff"}, id="c3"),
        FakeToolCall("file_write", {"path": "new.txt", "content": "hi\n"}, id="c4"),
        FakeToolCall("file_read", {"path": "new.txt"}, id="c5"),
    ]
    server.add(Turn(tool_calls=calls))
    server.add(Turn(text="done"))
    done = cli(["run", "-p", "look around", "--yes", "-o", "stream-json"], project, server)
    assert done.returncode == 0, done.stderr
    order = [
        (e["type"].removeprefix("loom.tool_"), e["call_id"])
        for e in lines(done.stdout)
        if e["type"] in ("loom.tool_executing", "loom.tool_complete")
    ]
    # the three git reads all started before any of them finished
    started = [i for i, (kind, cid) in enumerate(order) if kind == "executing" and cid in
               ("c1", "c2", "c3")]  # fmt: skip
    first_done = min(i for i, (kind, _) in enumerate(order) if kind == "complete")
    assert len(started) == 3 and max(started) < first_done, order
    # the write starts only after all three reads, and the read of its file after it
    assert order.index(("executing", "c4")) > max(
        order.index(("complete", c)) for c in ("c1", "c2", "c3")
    )
    assert order.index(("executing", "c5")) > order.index(("complete", "c4"))
    assert "hi" in tool_results(server.requests[1])[4]
    # pairing: results in the thread in the calls' order, each answering its call
    thread = thread_file(lines(done.stdout)[-1]["thread_id"])
    results = [m["tool_call_id"] for m in thread["conversation"]["messages"] if m["role"] == "tool"]
    assert results == ["c1", "c2", "c3", "c4", "c5"]


def _failing_read() -> Turn:
    return Turn(tool_calls=[FakeToolCall("file_read", {"path": "missing.py"})])


def test_third_identical_failure_says_change_approach(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    for _ in range(3):
        server.add(_failing_read())
    server.add(Turn(text="giving up on that file"))
    done = cli(["run", "-p", "read it", "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr
    results = tool_results(server.requests[3])
    assert "failed 3 times in a row" not in results[1]
    assert "has now failed 3 times in a row" in results[2] and "Change approach" in results[2]


def test_fifth_identical_failure_ends_the_turn_with_a_message(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    server.add(_failing_read())
    # a different call in between does not reset the streak; a sixth is never asked for
    server.add(Turn(tool_calls=[FakeToolCall("file_read", {"path": "notes.txt"})]))
    for _ in range(4):
        server.add(_failing_read())
    server.add(Turn(text="never asked"))
    done = cli(["run", "-p", "read it", "-o", "json"], project, server)
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["subtype"] == "error_during_execution"
    assert "repeated the same failing call (file_read" in result["error"]
    assert "loom: the thread is saved" in done.stderr
    assert len(server.requests) == 6
    thread = thread_file(result["thread_id"])
    messages = thread["conversation"]["messages"]
    assert messages[-1]["role"] == "tool" and "failed 5 times in a row" in messages[-1]["content"]
    assert thread["agent_state"]["kind"] == "WaitingForUserInput"


def test_results_of_calls_run_together_name_their_call(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    server.add(Turn(tool_calls=[FakeToolCall("git", {"subcommand": "status"}),
                                FakeToolCall("git", {"subcommand": "log"})]))  # fmt: skip
    server.add(Turn(text="done"))
    done = cli(["run", "-p", "look", "-v"], project, server)
    assert done.returncode == 0, done.stderr
    results = [line for line in done.stderr.splitlines() if "⎿" in line]
    assert len(results) == 2
    assert {r.split("⎿ ", 1)[1].split(":", 1)[0] for r in results} == {"git status", "git log"}, (
        done.stderr
    )


@pytest.mark.parametrize("first", ["c1", "c2"])
def test_calls_run_together_are_named_whichever_finishes_first(first: str) -> None:
    """The last call started finishing first (a fast error) was shown unnamed, as though
    it were the only one running (seen once in CI)."""
    out = io.StringIO()
    shown = EventRenderer(Console(file=out, width=200))
    for cid, sub in (("c1", "status"), ("c2", "log")):
        shown.render(ToolExecuting(session_id="s", tool_name="git", call_id=cid,
                                   arguments={"subcommand": sub}))  # fmt: skip
    for cid in (first, "c2" if first == "c1" else "c1"):
        shown.render(ToolComplete(session_id="s", tool_name="git", call_id=cid,
                                  result="fatal: no commits", is_error=cid == "c2"))  # fmt: skip
    results = [line for line in out.getvalue().splitlines() if "⎿" in line]
    assert sorted(r.split("⎿ ", 1)[1].split(":", 1)[0] for r in results) == [
        "git log",
        "git status",
    ]


def test_a_single_call_result_sits_under_its_own_line_unnamed() -> None:
    out = io.StringIO()
    shown = EventRenderer(Console(file=out, width=200))
    shown.render(ToolExecuting(session_id="s", tool_name="git", call_id="c1",
                               arguments={"subcommand": "status"}))  # fmt: skip
    shown.render(ToolComplete(session_id="s", tool_name="git", call_id="c1", result="clean"))
    assert "⎿ clean" in out.getvalue()
