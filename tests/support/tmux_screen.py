"""The REPL in a tmux window, for tests that judge the screen a person sees (what stays
on it after a spinner, a redraw or a Ctrl-C), not only the bytes the program wrote."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
import uuid
from pathlib import Path

from tests.fakes.llm_server import FakeLlmServer
from tests.support.loom_cli import provider_env


class TmuxRepl:
    """`python -m loom ARGS` in a detached 40x160 tmux session of its own server."""

    def __init__(self, args: list[str], cwd: Path, server: FakeLlmServer) -> None:
        self.socket = f"loom-test-{uuid.uuid4().hex[:8]}"
        env = {**provider_env(server), "NO_COLOR": "1", "TERM": "xterm"}
        kept = ("LOOM_", "XDG_", "PYTHON", "HOME", "PATH", "LANG", "LC_", "CI")
        env = {**{k: v for k, v in os.environ.items() if k.startswith(kept)}, **env}
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        command = f"env {exports} {shlex.quote(sys.executable)} -m loom {shlex.join(args)}"
        self._tmux("new-session", "-d", "-x", "160", "-y", "40", "-c", str(cwd), command)

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True
        )
        return done.stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-S", "-200")

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", *keys)

    def wait_for(self, text: str, timeout: float = 60, times: int = 1) -> str:
        """The screen once it shows `text` `times` times (AssertionError with the screen
        otherwise)."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if screen.count(text) >= times:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never showed; the screen:\n{screen}")
            time.sleep(0.1)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)
