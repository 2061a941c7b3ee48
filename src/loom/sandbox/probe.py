"""Prove on this machine that the sandbox holds: run a few commands under it and check
what happened (for `loom sandbox check`).

`run_probes` uses throw-away folders and a policy where only one of them is writable and
the network is off: writes inside and outside, the network, Unix sockets, a git
repository's `.git` (write, rename), a new `.mcp.json` (taken away by the sweep), a
hidden folder, the machine's shared temp folder (out of view), and the limits (a fork
bomb, a big file, a big allocation).
`probe_live` then checks this project's own policy: every hidden Loom folder looks empty
and refuses a write, and every protected path refuses one; nothing there changes when
the sandbox holds (a probe that did get through is undone and reported)."""

from __future__ import annotations

import dataclasses
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from loom.sandbox.backend import Backend
from loom.sandbox.limits import Limits, cgroup_parents, join_then_exec, make_group
from loom.sandbox.policy import SandboxPolicy, WritableRoot, own_install_in_temp
from loom.sandbox.sweep import started, sweep

PROBE_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class ProbeResult:
    name: str
    passed: bool
    detail: str


def run_probes(backend: Backend) -> list[ProbeResult]:
    base = Path(tempfile.mkdtemp(prefix="loom-sandbox-check-"))
    try:
        inside, outside, hidden = base / "inside", base / "outside", base / "inside" / "h"
        inside.mkdir()
        outside.mkdir()
        hidden.mkdir()
        (hidden / "secret.txt").write_text("hidden\n")
        (outside / "keep.txt").write_text("untouched\n")
        (inside / ".git" / "hooks").mkdir(parents=True)
        (inside / ".git" / "config").write_text("[core]\n")
        policy = SandboxPolicy(
            mode="on",
            network=False,
            project_root=inside.resolve(),
            writable=(WritableRoot(inside.resolve(), "probe"),),
            hidden=(WritableRoot(hidden.resolve(), "probe"),),
            limits=PROBE_LIMITS,
            own_install=own_install_in_temp(),
        )
        return [
            _write_inside(backend, policy, inside),
            _write_outside(backend, policy, inside, outside),
            _network(backend, policy, inside),
            _unix_socket(backend, policy, inside, base),
            _git_folder(backend, policy, inside),
            _new_config(backend, policy, inside, base),
            _hidden(backend, policy, inside, hidden),
            _shared_temp(backend, policy, inside),
            *_limits(backend, policy, inside),
        ]
    finally:
        shutil.rmtree(base, ignore_errors=True)


PROBE_LIMITS = Limits(max_processes=32, max_memory_mb=64, max_file_mb=1)


def _run(
    backend: Backend, policy: SandboxPolicy, cwd: Path, script: str, *, limited: bool = False
) -> tuple[int, str]:
    group = make_group(policy.limits) if limited else None
    if group is not None and cgroup_parents().caps_processes:
        policy = dataclasses.replace(policy, processes_by_cgroup=True)
    argv, fds = backend.wrap(policy, ["/bin/sh", "-c", script], cwd)
    if group is not None:
        argv = join_then_exec(group, argv)
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
        if group is not None:
            group.close()
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


def _git_folder(backend: Backend, policy: SandboxPolicy, inside: Path) -> ProbeResult:
    script = "echo x > .git/commondir; touch .git/hooks/pre-commit; mv .git .git.old"
    _code, output = _run(backend, policy, inside, script)
    git = inside / ".git"
    held = not (git / "commondir").exists() and not (git / "hooks" / "pre-commit").exists()
    if held and git.is_dir() and not (inside / ".git.old").exists():
        return ProbeResult(".git read-only", True, "commondir, a hook and renaming .git refused")
    return ProbeResult(".git read-only", False, f"a write in .git went through: {output}")


def _new_config(backend: Backend, policy: SandboxPolicy, inside: Path, base: Path) -> ProbeResult:
    since = started()
    _run(backend, policy, inside, "mkdir -p a/b && echo '{}' > a/b/.mcp.json")
    taken = sweep(inside, since, base / "quarantine")
    if taken == ["a/b/.mcp.json"] and not (inside / "a" / "b" / ".mcp.json").exists():
        return ProbeResult(
            "new Loom config", True, "a new .mcp.json was taken away after the command"
        )
    return ProbeResult("new Loom config", False, "a new .mcp.json stayed where Loom reads it")


def _shared_temp(backend: Backend, policy: SandboxPolicy, inside: Path) -> ProbeResult:
    """The machine's shared temp folder: out of view, and a write to /tmp lands in the
    command's own."""
    from loom.sandbox.session_temp import system_temp

    handle, name = tempfile.mkstemp(prefix="loom-sandbox-check-", dir=system_temp())
    os.close(handle)
    marker = Path(name)
    planted = [marker.with_name(marker.name + "-planted"), Path("/tmp", marker.name + "-tmp")]
    try:
        script = f"cat '{marker}' && echo SEEN; echo x > '{planted[0]}'; echo x > '{planted[1]}'"
        _code, output = _run(backend, policy, inside, script)
        landed = [str(path) for path in planted if path.exists()]
    finally:
        for path in (marker, *planted):
            path.unlink(missing_ok=True)
    if "SEEN" not in output and not landed:
        return ProbeResult("shared temp", True, "the shared temp folder is out of view; /tmp "
                           "is the command's own")  # fmt: skip
    return ProbeResult("shared temp", False, f"the shared temp folder was reached: {landed}")


def _hidden(backend: Backend, policy: SandboxPolicy, inside: Path, hidden: Path) -> ProbeResult:
    _code, output = _run(backend, policy, inside, f"ls -A '{hidden}'; touch '{hidden}/x'")
    if "secret.txt" not in output and not (hidden / "x").exists():
        return ProbeResult("hidden folder", True, "looked empty and refused a write")
    return ProbeResult("hidden folder", False, f"seen or written: {output}")


def _limits(backend: Backend, policy: SandboxPolicy, inside: Path) -> list[ProbeResult]:
    limits = policy.limits
    bomb = (
        f"'{sys.executable}' -c 'import os, time\nn = 0\ntry:\n    while n < 500:\n"
        "        if os.fork() == 0:\n            time.sleep(5); os._exit(0)\n        n += 1\n"
        'except OSError:\n    pass\nprint("made", n)\''
    )
    _code, output = _run(backend, policy, inside, bomb, limited=True)
    made = output.rsplit("made", 1)[-1].split()[:1]
    forks = int(made[0]) if made and made[0].isdigit() else -1
    watched = "all of them were stopped" in output  # root without a cgroup: process_watch
    held = 0 <= forks < (limits.max_processes or 0) or watched
    processes = ProbeResult(
        "process limit",
        held,
        (
            "a fork bomb was stopped, all its processes killed by the watcher "
            if watched
            else f"a fork bomb stopped after {forks} processes "
        )
        + f"(cap {limits.max_processes})"
        if held
        else f"a fork bomb was not stopped: {output[-200:]}",
    )
    _run(backend, policy, inside, "head -c 3000000 /dev/zero > big.bin", limited=True)
    size = (inside / "big.bin").stat().st_size if (inside / "big.bin").exists() else 0
    cap = (limits.max_file_mb or 0) * 1024 * 1024
    files = ProbeResult(
        "file size limit",
        size <= cap,
        f"a 3 MB write stopped at {size} bytes (cap {limits.max_file_mb} MB)",
    )
    eat = f"'{sys.executable}' -c 'b = bytearray(256 * 1024 * 1024); print(\"ate\")'"
    _code, output = _run(backend, policy, inside, eat, limited=True)
    memory = ProbeResult(
        "memory limit",
        "ate" not in output,
        f"a 256 MB allocation failed (cap {limits.max_memory_mb} MB)"
        if "ate" not in output
        else "a 256 MB allocation went through",
    )
    return [processes, files, memory]


def probe_live(backend: Backend, policy: SandboxPolicy) -> list[ProbeResult]:
    """This project's own policy: each hidden folder and each protected path, tried."""
    results: list[ProbeResult] = []
    cwd = policy.project_root
    for folder in policy.hidden_paths():
        probe = folder / ".loom-sandbox-probe"
        _code, output = _run(backend, policy, cwd, f"ls -A '{folder}' | wc -l; : > '{probe}'")
        seen = output.split()[:1] != ["0"]
        wrote = probe.exists()
        if wrote:
            probe.unlink()
        ok = not seen and not wrote
        results.append(
            ProbeResult(
                f"hidden {folder}",
                ok,
                "empty and read-only inside" if ok else f"visible or writable: {output[-200:]}",
            )
        )
    for path in policy.protected_paths():
        target = path / ".loom-sandbox-probe" if path.is_dir() else path
        script = f": > '{target}'" if path.is_dir() else f": >> '{target}'"
        before = _stamp(target)
        _code, output = _run(backend, policy, cwd, script)
        changed = _stamp(target) != before
        if changed and path.is_dir() and target.exists():
            target.unlink()
        results.append(
            ProbeResult(
                f"read-only {path}",
                not changed and "Read-only file system" in output,
                "a write was refused" if not changed else "a write went through (undone)",
            )
        )
    return results


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_ctime_ns, info.st_size
