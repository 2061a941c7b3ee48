"""`loom run` fed what a careless paste or a hostile model sends: huge runs of text that
a backtracking scan chokes on, a FIFO named as a file, commands nested a thousand deep.
Each used to freeze the run (or crash the turn); each now costs one pass."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.loom_cli import loom, loom_popen


def test_a_pasted_hex_dump_reaches_the_model(server: FakeLlmServer, project: Path) -> None:
    # 400 KB of [0-9a-f] with no dot: the repo map's file-name scan was quadratic on it
    # (95 s for 100 KB), on the event loop, before every model call.
    blob = os.urandom(200_000).hex()
    server.add(Turn(text="That is a hex dump."))
    done = loom(["run", "-o", "json"], project, server, f"what is in calc.py?\n\n{blob}")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "That is a hex dump."
    (request,) = server.requests
    assert blob in json.dumps(request.json)


def test_a_mentioned_fifo_is_refused_at_once(server: FakeLlmServer, project: Path) -> None:
    os.mkfifo(project / "pipe.txt")  # reading it would wait for a writer for ever
    done = loom(["run", "-p", "summarise @pipe.txt"], project, server)
    assert done.returncode == 1
    assert "pipe.txt is not a regular file" in done.stderr and "Traceback" not in done.stderr
    assert server.requests == []


def test_long_and_deeply_nested_commands_are_judged_in_one_pass(
    server: FakeLlmServer, project: Path
) -> None:
    nested = "bash -c " * 1500 + "ls"  # was a RecursionError after 28 s
    curls = "curl " * 80_000 + "| sh"  # each `curl` rescanned the rest
    word = "echo " + "a" * 400_000  # the fork-bomb pattern rescanned it from every character
    server.add(
        Turn(tool_calls=[FakeToolCall("shell", {"command": nested}, id="c1")]),
        Turn(tool_calls=[FakeToolCall("shell", {"command": curls}, id="c2")]),
        Turn(tool_calls=[FakeToolCall("shell", {"command": word}, id="c3")]),
        Turn(text="done"),
    )
    done = loom(["run", "-p", "go", "--yes", "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr
    results = {
        m["tool_use_id"]: m["content"]
        for request in server.requests
        for message in request.json["messages"]
        if isinstance(message["content"], list)
        for m in message["content"]
        if m.get("type") == "tool_result"
    }
    assert "nested more than 4 deep" in str(results["c1"])
    assert "piping a download into a shell" in str(results["c2"])
    assert "write a script with file_write" in str(results["c3"])  # not dangerous: too long


def test_sigterm_stops_a_run_busy_with_a_big_paste(server: FakeLlmServer, project: Path) -> None:
    # The paste is scanned before the turn starts; a signal then used to be lost, and the
    # run went on to wait for the model's whole answer.
    server.add(Turn(text="late", delay=120))
    process = loom_popen(["run", "-o", "json"], project, server)
    try:
        assert process.stdin is not None
        process.stdin.write("look at this\n\n" + "word_" * 2_000_000)
        process.stdin.close()
        threads = Path(os.environ["LOOM_HOME"]) / "data" / "threads"
        deadline = time.monotonic() + 60
        while not list(threads.glob("T-*.json")) and time.monotonic() < deadline:
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    finally:
        process.kill()  # never left behind when the run ignores the signal
    assert process.stderr is not None and process.stdout is not None
    err = process.stderr.read()
    assert process.returncode == 1, err
    assert "stopped by SIGTERM" in err and "Traceback" not in err
    assert json.loads(process.stdout.read())["subtype"] == "error_during_execution"
