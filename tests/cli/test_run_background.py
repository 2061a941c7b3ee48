"""Background commands through `loom run` (a real subprocess, the real sandbox, the fake
LLM server): started, read, and never outliving the session, however it ends."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.loom_cli import _child_environ, loom
from tests.support.processes import alive as _alive


def _start(marker: str, printed: str) -> FakeToolCall:
    command = f"echo {printed}; sleep {marker}; echo never"
    return FakeToolCall("shell", {"command": command, "background": True}, id="call_bg")


def test_a_background_command_answers_at_once_is_read_and_ends_with_the_run(
    server: FakeLlmServer, project: Path
) -> None:
    marker = "31337"
    read = FakeToolCall("shell_output", {"id": "b1", "wait": 10, "filter": "hello"})
    server.add(Turn(tool_calls=[_start(marker, "hello-bg")]), Turn(tool_calls=[read]))
    server.add(Turn(text="it runs"))
    done = loom(["run", "-p", "start a server", "--yes", "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr
    started = json.dumps(server.requests[1].json["messages"][-1])
    assert "id: b1" in started and "running" in started
    output = json.dumps(server.requests[2].json["messages"][-1])
    assert "hello-bg" in output and "b1 running for" in output
    assert _alive(marker) == []  # the run ended: so did the command and its sleep


def _stop_mid_turn(server: FakeLlmServer, project: Path, marker: str, sig: signal.Signals) -> str:
    """`loom run` starts a background command, then waits on a slow model answer: stop it
    with `sig` then; its stderr, once every process named by `marker` is gone (or not)."""
    server.add(Turn(tool_calls=[_start(marker, "up")]), Turn(text="late", delay=60))
    before = len(server.requests)
    process = subprocess.Popen(
        [sys.executable, "-m", "loom", "run", "-p", "go", "--yes"], cwd=project,
        env=_child_environ(server, {}), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while len(server.requests) < before + 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _alive(marker), "the background command runs while the turn waits"
        process.send_signal(sig)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    deadline = time.monotonic() + 10
    while _alive(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    return err


def test_sigterm_ends_the_background_commands_too(server: FakeLlmServer, project: Path) -> None:
    err = _stop_mid_turn(server, project, "31338", signal.SIGTERM)
    assert "Traceback" not in err, err
    assert _alive("31338") == []


def test_stream_json_tells_each_background_command_start_output_end_and_exit(
    server: FakeLlmServer, project: Path
) -> None:
    quick = FakeToolCall("shell", {"command": "echo hi", "background": True}, id="c1")
    slow = FakeToolCall("shell", {"command": "sleep 31339", "background": True}, id="c2")
    read = FakeToolCall("shell_output", {"id": "b1", "wait": 10})
    server.add(Turn(tool_calls=[quick, slow]), Turn(tool_calls=[read]), Turn(text="ok"))
    done = loom(["run", "-p", "go", "--yes", "-o", "stream-json"], project, server)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    told = [
        (line["command_id"], line["change"], line["exit_code"])
        for line in lines
        if line["type"] == "loom.background_command"
    ]
    assert ("b1", "started", None) in told and ("b2", "started", None) in told
    assert ("b1", "output_ended", None) in told and ("b1", "exited", 0) in told
    assert told.index(("b1", "started", None)) < told.index(("b1", "exited", 0))
    assert not any(change == "exited" for cid, change, _ in told if cid == "b2")
    assert _alive("31339") == []


def test_the_model_hears_of_an_ended_command_in_its_next_request_within_the_turn(
    server: FakeLlmServer, project: Path
) -> None:
    start = FakeToolCall("shell", {"command": "echo ended-early", "background": True}, id="c1")
    pause = FakeToolCall("shell", {"command": "sleep 1"}, id="c2")  # b1 ends meanwhile
    server.add(Turn(tool_calls=[start]), Turn(tool_calls=[pause]), Turn(text="ok"))
    done = loom(["run", "-p", "go", "--yes", "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr
    said = "[b1 exited with code 0: echo ended-early]"
    assert said not in json.dumps(server.requests[0].json)
    told = json.dumps(server.requests[2].json)
    assert "[background commands that ended]" in told and said in told


def test_ctrl_c_ends_the_background_commands_too(server: FakeLlmServer, project: Path) -> None:
    err = _stop_mid_turn(server, project, "31371", signal.SIGINT)
    assert "Traceback" not in err, err
    assert _alive("31371") == []


def test_a_killed_loom_leaves_no_background_command(server: FakeLlmServer, project: Path) -> None:
    # SIGKILL: no clean-up of Loom's runs; the parent-death signal of the spawn and
    # bwrap's --die-with-parent take the sandbox and everything in it along
    for marker in ("31372", "31373", "31374"):
        _stop_mid_turn(server, project, marker, signal.SIGKILL)
        assert _alive(marker) == [], marker


def test_a_sessions_commands_share_one_loopback_and_one_temp_folder(
    server: FakeLlmServer, project: Path
) -> None:
    """A server started in the background answers a later command of the same session
    (one network namespace and /tmp per session); the host cannot reach it."""
    port = 38765
    serve = (
        f"echo shared-temp > /tmp/marker.txt && cd /tmp && "
        f"exec python3 -m http.server {port} --bind 127.0.0.1"
    )
    fetch = (
        'python3 -c "import time, urllib.request\n'
        "for _ in range(100):\n"
        "    try:\n"
        f"        url = 'http://127.0.0.1:{port}/marker.txt'\n"
        "        print(urllib.request.urlopen(url).read().decode()); break\n"
        "    except OSError: time.sleep(0.1)\n"
        '"; cat /tmp/marker.txt'
    )
    started = FakeToolCall("shell", {"command": serve, "background": True}, id="c1")
    fetched = FakeToolCall("shell", {"command": fetch}, id="c2")
    server.add(Turn(tool_calls=[started]), Turn(tool_calls=[fetched]), Turn(text="ok"))
    done = loom(["run", "-p", "go", "--yes", "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr
    result = json.dumps(server.requests[2].json["messages"][-1])
    assert result.count("shared-temp") == 2, result  # over loopback, and from /tmp
    import socket

    with socket.socket() as probe:  # the host's loopback is another one
        assert probe.connect_ex(("127.0.0.1", port)) != 0
    assert _alive("--unshare-net --ro-bind / / --info-fd") == []  # the holder ended too
