"""SIGTERM ends `loom run` wherever it waits (stdin, the model, a tool), with exit code 1,
the thread saved, nothing left running and the session's temp folder gone; and an
@-mentioned FIFO or device is refused at once, as file_read refuses it. Real
subprocesses, real signals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.loom_cli import loom, loom_popen


def _start(project: Path, server: FakeLlmServer, args: list[str], temp: Path) -> subprocess.Popen:
    return loom_popen(["run", *args], project, server, TMPDIR=str(temp))


def _wait_for(ready: Callable[[], bool], process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while not ready():
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        assert time.monotonic() < deadline, "never got there"
        time.sleep(0.05)


def _terminate(process: subprocess.Popen) -> tuple[str, str]:
    process.send_signal(signal.SIGTERM)
    try:
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()  # never left behind when the run ignores the signal
    return out, err


def _running(token: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if token.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _reads_its_stdin(pid: int) -> bool:
    """Blocked in read(0, ...) (the kernel's view: /proc/PID/syscall)."""
    try:
        fields = Path(f"/proc/{pid}/syscall").read_text().split()
    except OSError:
        return False
    read_call = {"x86_64": "0", "aarch64": "63"}.get(os.uname().machine)
    return len(fields) > 1 and fields[0] == read_call and fields[1] == "0x0"


def _saved_threads() -> list[dict]:
    threads = Path(os.environ["LOOM_HOME"]) / "data" / "threads"
    return [json.loads(path.read_text()) for path in threads.glob("T-*.json")]


@pytest.fixture
def temp(tmp_path: Path) -> Path:
    folder = tmp_path / "systmp"
    folder.mkdir()
    return folder


def test_sigterm_while_waiting_for_the_task_on_stdin(
    server: FakeLlmServer, project: Path, temp: Path
) -> None:
    process = _start(project, server, [], temp)  # no -p: the task comes from stdin
    try:
        _wait_for(lambda: _reads_its_stdin(process.pid), process)
        out, err = _terminate(process)
    finally:
        assert process.stdin is not None
        process.stdin.close()
    assert process.returncode == 1, err
    assert "Aborted!" in err and "Traceback" not in err and out == ""
    assert server.requests == [] and list(temp.iterdir()) == []


def test_sigterm_while_waiting_on_the_model(
    server: FakeLlmServer, project: Path, temp: Path
) -> None:
    server.add(Turn(text="late", delay=120))
    process = _start(project, server, ["-p", "explain calc.py", "-o", "json"], temp)
    _wait_for(lambda: len(server.requests) == 1, process)
    out, err = _terminate(process)
    assert process.returncode == 1, err
    assert "stopped by SIGTERM" in err and "Traceback" not in err
    assert json.loads(out)["subtype"] == "error_during_execution"
    (thread,) = _saved_threads()
    assert "explain calc.py" in json.dumps(thread["conversation"])
    assert list(temp.iterdir()) == []  # the session's temp folder went with it


def test_sigterm_while_a_sandboxed_command_runs(
    server: FakeLlmServer, project: Path, temp: Path
) -> None:
    from tests.support.sandbox import require_sandbox

    require_sandbox()
    token = f"loom-signal-{uuid.uuid4().hex}"
    command = (
        f"echo kept > /tmp/in-temp.txt; touch started; "
        f"exec {sys.executable} -c 'import time; time.sleep(300)' {token}"
    )
    server.add(Turn(tool_calls=[FakeToolCall("shell", {"command": command})]), Turn(text="x"))
    process = _start(project, server, ["-p", "run the slow thing", "--yes"], temp)
    _wait_for(lambda: (project / "started").exists() and bool(_running(token)), process)
    assert len(list(temp.glob("loom-tmp-*/in-temp.txt"))) == 1
    _out, err = _terminate(process)
    assert process.returncode == 1, err
    assert "stopped by SIGTERM" in err and "Traceback" not in err
    assert _running(token) == []  # the command and its sandbox are gone
    assert list(temp.iterdir()) == []
    (thread,) = _saved_threads()
    assert "run the slow thing" in json.dumps(thread["conversation"])


def test_a_mentioned_fifo_image_is_refused_at_once(server: FakeLlmServer, project: Path) -> None:
    os.mkfifo(project / "shot.png")  # opening it for reading waits for a writer for ever
    done = loom(["run", "-p", "what is in @shot.png?"], project, server)
    assert done.returncode == 1, done.stderr
    assert "@shot.png: " in done.stderr and "shot.png is not a regular file" in done.stderr
    assert "Traceback" not in done.stderr and server.requests == []


def test_a_mentioned_socket_or_device_is_refused_at_once(
    server: FakeLlmServer, project: Path
) -> None:
    import socket
    import stat

    names = ["sock.png"]
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(project / "sock.png"))
    if os.geteuid() == 0:  # a character device (/dev/zero's numbers): endless bytes
        os.mknod(project / "zero.png", stat.S_IFCHR | 0o600, os.makedev(1, 5))
        names.append("zero.png")
    try:
        for name in names:
            done = loom(["run", "-p", f"look: @{name}"], project, server)
            assert done.returncode == 1, done.stderr
            assert f"@{name}:" in done.stderr and "Traceback" not in done.stderr
    finally:
        listener.close()
    assert server.requests == []


def test_sigterm_while_a_session_start_hook_runs(
    server: FakeLlmServer, project: Path, temp: Path, tmp_path: Path
) -> None:
    import shlex

    from tests.support.config_files import user_config

    script = Path(__file__).resolve().parents[1] / "hooks" / "hook_script.py"
    log = tmp_path / f"start-{uuid.uuid4().hex}.log"
    command = shlex.join([sys.executable, str(script), str(log), "hang"])
    user_config(f"[[hooks.SessionStart]]\ncommand = {json.dumps(command)}\ntimeout = 600\n")
    server.add(Turn(text="never asked"))
    process = _start(project, server, ["-p", "hello"], temp)
    _wait_for(lambda: log.exists() and bool(_running(log.name)), process)
    _out, err = _terminate(process)
    assert process.returncode == 1, err
    assert "stopped by SIGTERM" in err and "Traceback" not in err
    assert _running(log.name) == []  # the hook was stopped with the run
    assert server.requests == [] and list(temp.iterdir()) == []
