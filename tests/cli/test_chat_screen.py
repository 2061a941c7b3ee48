"""What stays on the screen after Ctrl-C (issue 26: each ignored Ctrl-C left a stale
spinner line). Judged on tmux's screen, where a line the program failed to erase stays."""

from __future__ import annotations

import re
import shutil
import time
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


@pytest.mark.parametrize("interrupt", [False, True], ids=["streaming", "after-ctrl-c"])
def test_keys_typed_during_a_turn_show_once_in_the_next_prompt(
    server: FakeLlmServer, project: Path, interrupt: bool
) -> None:
    server.add(Turn(text=["slow ", "answer"] + ["."] * 6, chunk_delay=0.5))
    server.add(Turn(text="second answer"))
    repl = TmuxRepl(["--private"], project, server)
    try:
        repl.wait_for(PROMPT)
        repl.keys("say something slowly", "Enter")
        repl.wait_for("slow answer")
        if interrupt:
            repl.keys("C-c")
        repl.keys("-l", "typed ahead")  # while the answer streams or winds down
        repl.wait_for(PROMPT, times=2)
        repl.wait_for("typed ahead")
        time.sleep(0.5)  # a second copy would be drawn by now
        screen = repl.screen()
        # not echoed by the terminal among the output, then again by the prompt: once,
        # on the prompt's line, ready to be sent or edited
        assert screen.count("typed ahead") == 1, screen
        line = next(line for line in screen.splitlines() if "typed ahead" in line)
        assert line.startswith(PROMPT), screen
        repl.keys("Enter")
        repl.wait_for("second answer")
    finally:
        repl.close()


def test_ctrl_c_while_an_answer_streams_keeps_the_words_shown(
    server: FakeLlmServer, project: Path
) -> None:
    """The words already on the screen stay in the thread (an assistant message marked
    interrupted): the next request sends them, and they are not printed twice."""
    server.add(Turn(text=["slow ", "answer"] + ["."] * 40, chunk_delay=1.0))
    server.add(Turn(text="second answer"))
    repl = TmuxRepl(["--private"], project, server)
    try:
        repl.wait_for(PROMPT)
        repl.keys("say something slowly", "Enter")
        repl.wait_for("slow answer")
        repl.keys("C-c")
        repl.wait_for("interrupted")
        repl.wait_for(PROMPT, times=2)
        repl.keys("and now?", "Enter")
        repl.wait_for("second answer")
        assert repl.screen().count("slow answer") == 1, repl.screen()
    finally:
        repl.close()
    sent = server.requests[-1].json["messages"]
    said = [(m["role"], _text_of(m["content"])) for m in sent]
    kept = [content for role, content in said if role == "assistant"]
    assert len(kept) == 1 and kept[0].startswith("slow answer"), said
    assert said[-1] == ("user", "and now?")


def _text_of(content: str | list[dict]) -> str:
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content if block.get("type") == "text")
