"""Running `loom ARGS` in tests: as a real subprocess, or in this process.

`loom(...)` starts the real console entry point (`python -m loom`) and is for what only a
process shows: start-up, exit on signals, pipes, what a fresh interpreter imports.
`loom_in_process(...)` calls the same entry point (`loom.__main__.main`) here, for tests
about a command's logic: the SDKs are imported once per test process instead of once per
call. It takes and gives back what the command could change process-wide (working
folder, environment, standard streams, signal handlers, umask) and fails when the
command leaves a thread running. Not for what a process-wide cache keeps from the first
call (e.g. plugins found through PYTHONPATH): those tests start a process.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from tests.fakes.llm_server import FakeLlmServer

# a key that looks real, so the tests can check that it reaches no page and no log
KEYS = {"ANTHROPIC_API_KEY": "sk-test-secret-key", "OPENAI_API_KEY": "sk-test-secret-key"}


def provider_env(server: FakeLlmServer) -> dict[str, str]:
    """API keys and base URLs that point the providers' SDKs at the fake server."""
    return {
        **KEYS,
        "ANTHROPIC_BASE_URL": server.anthropic_base_url,
        "OPENAI_BASE_URL": server.openai_base_url,
    }


def _environment(server: FakeLlmServer | None, env: Mapping[str, str]) -> dict[str, str | None]:
    """The changes to make: the fake server's variables, then `env` (an empty value unsets)."""
    changes: dict[str, str | None] = dict(provider_env(server)) if server else {}
    changes.update({key: value or None for key, value in env.items()})
    return changes


def _child_environ(server: FakeLlmServer | None, env: Mapping[str, str]) -> dict[str, str]:
    environ = dict(os.environ)
    for key, value in _environment(server, env).items():
        if value is None:
            environ.pop(key, None)
        else:
            environ[key] = value
    return environ


def loom(
    args: list[str],
    cwd: Path,
    server: FakeLlmServer | None,
    stdin: str | None = None,
    **env: str,
) -> subprocess.CompletedProcess[str]:
    """The real console entry point in a subprocess (`python -m loom ARGS`)."""
    environ = _child_environ(server, env)
    return subprocess.run(
        [sys.executable, "-m", "loom", *args],
        cwd=cwd,
        env=environ,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def loom_popen(
    args: list[str], cwd: Path, server: FakeLlmServer | None, **env: str
) -> subprocess.Popen[str]:
    """`python -m loom ARGS` started, not waited for (signals, concurrent runs): pipes for
    stdin, stdout and stderr (text)."""
    environ = _child_environ(server, env)
    return subprocess.Popen(
        [sys.executable, "-m", "loom", *args],
        cwd=cwd,
        env=environ,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@dataclass
class Done:
    """What `loom_in_process` gives back, named like a CompletedProcess."""

    returncode: int
    stdout: str
    stderr: str


# Signals a command may take over (asyncio's handlers, a REPL's SIGWINCH...).
_SIGNALS = [
    getattr(signal, name)
    for name in (
        "SIGINT",
        "SIGTERM",
        "SIGHUP",
        "SIGQUIT",
        "SIGPIPE",
        "SIGCHLD",
        "SIGWINCH",
        "SIGUSR1",
        "SIGUSR2",
        "SIGTSTP",
        "SIGCONT",
        "SIGALRM",
    )
    if hasattr(signal, name)
]


@contextlib.contextmanager
def process_state_kept(cwd: Path) -> Iterator[None]:
    """Run the body in `cwd`; afterwards the working folder, environment, temp folder,
    signal handlers, signal mask, wake-up fd and umask are what they were (the standard
    streams are CliRunner's)."""
    folder = os.getcwd()
    environ = dict(os.environ)
    temp = tempfile.tempdir
    tempfile.tempdir = None  # gettempdir() reads TMPDIR again, as a new process would
    handlers = {signum: signal.getsignal(signum) for signum in _SIGNALS}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    wakeup = signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(wakeup)
    umask = os.umask(0o022)
    os.umask(umask)
    threads = set(threading.enumerate())
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(folder)
        os.environ.clear()
        os.environ.update(environ)
        tempfile.tempdir = temp
        for signum, handler in handlers.items():
            if handler is not None:
                signal.signal(signum, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        signal.set_wakeup_fd(wakeup)
        os.umask(umask)
    no_thread_left(threads)


def no_thread_left(before: set[threading.Thread], wait: float = 10) -> None:
    """A command must not leave a (non-daemon) thread running: in a real process that
    thread would keep `loom` from exiting. Threads still ending get `wait` seconds."""
    left = [t for t in threading.enumerate() if t not in before and not t.daemon]
    deadline = time.monotonic() + wait
    for thread in left:
        thread.join(max(0.0, deadline - time.monotonic()))
    running = [t.name for t in left if t.is_alive()]
    assert not running, f"loom left threads running: {running}"


def loom_in_process(
    args: list[str],
    cwd: Path,
    server: FakeLlmServer | None,
    stdin: str | None = None,
    **env: str,
) -> Done:
    """`loom ARGS` through `loom.__main__.main` in this process, as `loom(...)` runs it
    in a subprocess: same arguments, environment and captured output. Only for sync
    tests (the command runs its own event loop)."""
    from loom.__main__ import main

    runner = CliRunner()
    with (
        runner.isolation(input=stdin, env=_environment(server, env)) as (out, err, _),
        process_state_kept(cwd),
    ):
        try:
            main(list(args))
            code = 0
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
            if isinstance(exit_.code, str):
                sys.stderr.write(exit_.code + "\n")
        sys.stdout.flush()
        sys.stderr.flush()
        return Done(code, out.getvalue().decode(), err.getvalue().decode("utf-8", "replace"))


def lines(stdout: str) -> list[dict]:
    """The JSON objects of `-o stream-json` output, one per line."""
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]
