"""`loom mcp serve` over stdio ends when told to (issue 26: every face honours SIGINT and
SIGTERM). Ctrl-C used to wait for the client's next line: the SDK reads stdin in a thread
nothing interrupts, so a connected, idle client kept the server for ever."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.mcp import SERVE


def _send(process: subprocess.Popen[str], message: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    process.stdin.flush()


def _connected(proj: Path, *flags: str) -> subprocess.Popen[str]:
    """The server with a client that has finished the handshake and keeps stdin open."""
    process = subprocess.Popen(
        [*SERVE, "-C", str(proj), *flags],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}}
    _send(process, {"id": 1, "method": "initialize", "params": hello})
    assert process.stdout is not None
    assert json.loads(process.stdout.readline())["id"] == 1
    _send(process, {"method": "notifications/initialized"})
    return process


def _ended(process: subprocess.Popen[str]) -> str:
    try:
        process.wait(timeout=30)  # a generous bound: without the fix it never ends
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        pytest.fail("loom mcp serve did not end on the signal")
    assert process.stderr is not None
    return process.stderr.read()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_ends_the_server_while_its_client_is_idle(proj: Path, signum: int) -> None:
    process = _connected(proj)
    process.send_signal(signum)
    err = _ended(process)
    assert process.returncode in (0, -signum), err
    assert "Traceback" not in err


def test_ctrl_c_ends_the_server_while_a_command_runs(proj: Path) -> None:
    process = _connected(proj, "--allow", "shell")
    command = "touch started; sleep 60; touch finished"
    _send(process, {"id": 2, "method": "tools/call",
                    "params": {"name": "shell", "arguments": {"command": command}}})  # fmt: skip
    while not (proj / "started").exists():
        assert process.poll() is None
    process.send_signal(signal.SIGINT)
    err = _ended(process)
    assert process.returncode == 0 and "Traceback" not in err, err
    assert not (proj / "finished").exists()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_removes_the_servers_temp_folder(
    proj: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signum: int
) -> None:
    temp = tmp_path / "systmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    process = _connected(proj)
    assert [p.name[:9] for p in temp.iterdir()] == ["loom-tmp-"]  # its commands' /tmp
    process.send_signal(signum)
    err = _ended(process)
    assert process.returncode == 0 and "Traceback" not in err, err
    assert list(temp.iterdir()) == []
