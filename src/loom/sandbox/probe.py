"""Prove on this machine that the sandbox holds: run a few commands under it and check
what happened (for `loom sandbox check`). Each probe uses its own throw-away folders and
a policy where only one of them is writable and the network is off."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from loom.sandbox.backend import Backend
from loom.sandbox.policy import SandboxPolicy, WritableRoot

PROBE_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class ProbeResult:
    name: str
    passed: bool
    detail: str


def run_probes(backend: Backend) -> list[ProbeResult]:
    base = Path(tempfile.mkdtemp(prefix="loom-sandbox-check-"))
    try:
        inside, outside = base / "inside", base / "outside"
        inside.mkdir()
        outside.mkdir()
        (outside / "keep.txt").write_text("untouched\n")
        policy = SandboxPolicy(
            mode="on",
            network=False,
            project_root=inside.resolve(),
            writable=(WritableRoot(inside.resolve(), "probe"),),
        )
        return [
            _write_inside(backend, policy, inside),
            _write_outside(backend, policy, inside, outside),
            _network(backend, policy, inside),
            _unix_socket(backend, policy, inside, base),
        ]
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _run(backend: Backend, policy: SandboxPolicy, cwd: Path, script: str) -> tuple[int, str]:
    argv, fds = backend.wrap(policy, ["/bin/sh", "-c", script], cwd)
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            pass_fds=fds,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return -1, str(exc)
    finally:
        for fd in fds:
            os.close(fd)
    return done.returncode, (done.stdout + done.stderr).strip()


def _write_inside(backend: Backend, policy: SandboxPolicy, inside: Path) -> ProbeResult:
    code, output = _run(backend, policy, inside, "echo ok > written.txt")
    wrote = (inside / "written.txt").is_file()
    detail = "a write inside the writable folder worked" if wrote else f"failed: {output}"
    return ProbeResult("write inside", code == 0 and wrote, detail)


def _write_outside(
    backend: Backend, policy: SandboxPolicy, inside: Path, outside: Path
) -> ProbeResult:
    script = f"echo changed > '{outside}/keep.txt'; rm -rf '{outside}'; cd ..; touch x"
    _code, output = _run(backend, policy, inside, script)
    kept = (outside / "keep.txt").read_text() == "untouched\n"
    absent = not (inside.parent / "x").exists()
    if kept and absent:
        return ProbeResult("write outside", True, "writes, rm -rf and `cd ..` outside refused")
    return ProbeResult("write outside", False, f"a write outside went through: {output}")


def _network(backend: Backend, policy: SandboxPolicy, inside: Path) -> ProbeResult:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        script = (
            f"'{sys.executable}' -c 'import socket; "
            f'socket.create_connection(("127.0.0.1", {port}), timeout=5)\''
        )
        code, _output = _run(backend, policy, inside, script)
    if code != 0:
        return ProbeResult("network off", True, "a connection to a port on 127.0.0.1 failed")
    return ProbeResult("network off", False, "a connection to 127.0.0.1 went through")


def _unix_socket(backend: Backend, policy: SandboxPolicy, inside: Path, base: Path) -> ProbeResult:
    """A Unix socket file (as tmux, docker or ssh-agent use) must be out of reach too."""
    path = base / "probe.sock"
    with socket.socket(socket.AF_UNIX) as listener:
        try:
            listener.bind(str(path))
        except OSError as exc:  # e.g. a temp path longer than a socket address allows
            return ProbeResult("unix sockets", True, f"not checked: {exc}")
        listener.listen(1)
        script = (
            f"'{sys.executable}' -c 'import socket; "
            f'socket.socket(socket.AF_UNIX).connect("{path}")\''
        )
        code, _output = _run(backend, policy, inside, script)
    if code != 0:
        return ProbeResult("unix sockets", True, "a connection to a Unix socket file failed")
    return ProbeResult("unix sockets", False, "a connection to a Unix socket file went through")
