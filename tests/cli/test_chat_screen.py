"""What stays on the screen after Ctrl-C (issue 26: each ignored Ctrl-C left a stale
spinner line). Judged on tmux's screen, where a line the program failed to erase stays."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.chat_pty import PROMPT
from tests.support.tmux_screen import TmuxRepl

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")

SPINNER = re.compile(r"(thinking|running \w+|writing) \d+\.\ds")


def test_ctrl_c_leaves_no_spinner_line_on_the_screen(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(tool_calls=[FakeToolCall("shell", {"command": "sleep 20; touch finished"})]))
    server.add(Turn(text=["slow ", "answer"] + ["."] * 40, chunk_delay=1.0))
    repl = TmuxRepl(["--private"], project, server)
    try:
        repl.wait_for(PROMPT)
        repl.keys("run the slow thing", "Enter")
        repl.wait_for("[n] deny")
        repl.keys("y")
        repl.wait_for("running shell")
        repl.keys("C-c")  # while an allowed command runs
        repl.wait_for("interrupted")
        repl.keys("say something slowly", "Enter")
        repl.wait_for("slow answer")
        repl.keys("C-c")  # while the answer streams
        repl.wait_for("interrupted", times=2)
        repl.wait_for(PROMPT, times=3)  # the prompt after the second interruption
        lines = [line for line in repl.screen().splitlines() if SPINNER.search(line)]
        assert not lines, "\n".join(lines)
        assert not (project / "finished").exists()
    finally:
        repl.close()
