"""The REPL (`loom`) in a real pty, for tests of keys, the prompt and the terminal."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pexpect

from tests.fakes.llm_server import FakeLlmServer
from tests.support.loom_cli import provider_env

PROMPT = "normal ›"


def spawn(
    args: list[str], cwd: Path, server: FakeLlmServer, env: dict[str, str] | None = None
) -> pexpect.spawn:
    """`python -m loom ARGS` in a 40x200 pty, pointed at the fake server (`env` adds or
    replaces variables)."""
    env = {
        **os.environ,
        **provider_env(server),
        "PROMPT_TOOLKIT_NO_CPR": "1",  # nobody answers cursor-position queries in a test pty
        "TERM": "xterm",
        "NO_COLOR": "1",
        **(env or {}),
    }
    return pexpect.spawn(
        sys.executable,
        ["-m", "loom", *args],
        cwd=str(cwd),
        env=env,
        encoding="utf-8",
        timeout=30,
        dimensions=(40, 200),
        logfile=open(os.environ.get("CHAT_LOG", os.devnull), "a"),
    )


def saved_thread(child: pexpect.spawn) -> dict:
    """Wait for the REPL to end and read the thread it says it saved."""
    child.expect(r"Thread saved: (T-[0-9a-f-]+)")
    assert isinstance(child.match, re.Match)
    thread_id = child.match.group(1)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    path = Path(os.environ["LOOM_HOME"]) / "data" / "threads" / f"{thread_id}.json"
    return json.loads(path.read_text())
