"""The REPL shows hostile text as text (issue 34): the bytes it writes to a real pty hold
none of the escape sequences a model, a tool or a sub-agent sent, and on tmux's screen
the permission question for a command that hides a line shows the whole command."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.chat_pty import PROMPT, spawn
from tests.support.hostile_text import HOSTILE, OSC52, SHOWN, script_hostile_turns
from tests.support.tmux_screen import TmuxRepl

# What only the hostile text could have written (the REPL's own output moves the cursor
# and erases lines, so a lone ESC is no evidence; these are).
LINK = "See [docs](http://evil.example/x).\n"
LEAKS = {
    "OSC 52 clipboard write": "\x1b]52",
    "OSC 8 link": "\x1b]8;",
    "OSC 0 window title": "\x1b]0;",
    "CSI 2J clear screen": "\x1b[2J",
    "C1 CSI": "\x9b",
    "bidi override": "\u202e",
}


def test_streamed_answers_tool_output_todos_and_sub_agents_reach_the_pty_as_text(
    server: FakeLlmServer, project: Path
) -> None:
    # the answer streamed in pieces, a sequence cut between two of them
    answer = [f"# Done\n\nThe answer {OSC52[:3]}", f"{OSC52[3:]} {HOSTILE}\n\n", LINK]
    script_hostile_turns(server, answer)
    written = io.StringIO()
    child = spawn([], project, server)
    child.logfile_read = written
    child.expect(PROMPT)
    child.sendline("fix it")
    child.expect(r"\[n\] deny")
    child.send("y")
    child.expect(PROMPT)  # the turn is over
    child.sendline("/history")
    child.expect(r"you: (?:\x1b\[[0-9;]*m)*fix it")  # the recap, as a resumed thread shows it
    child.expect(PROMPT)
    child.sendeof()
    child.expect("Thread saved")
    output = written.getvalue()
    leaked = {name: seq for name, seq in LEAKS.items() if seq in output}
    assert not leaked, f"{leaked} reached the terminal"
    for shown in ("step " + SHOWN, "look " + SHOWN, "child says " + SHOWN, "answer " + SHOWN):
        assert shown in output, shown
    assert "(http://evil.example/x)" in output  # a link shows where it goes


needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")


@needs_tmux
def test_a_command_that_hides_a_line_is_shown_whole_at_the_question(
    server: FakeLlmServer, project: Path
) -> None:
    # Raw, the cursor codes climb back over "touch SPOOFED #", erase it and leave the
    # person reading "Run a shell command / ls -la"; y would run the hidden touch.
    spoof = "touch SPOOFED #\n\x1b[1A\x1b[2K\x1b[1Gls -la"
    server.add(Turn(tool_calls=[FakeToolCall("shell", {"command": spoof})]), Turn(text="ok"))
    repl = TmuxRepl(["--private"], project, server)
    try:
        repl.wait_for("normal ›")
        repl.keys("list the files", "Enter")
        screen = repl.wait_for("[n] deny")
        question = screen[screen.index("Run a shell command") :].splitlines()
        assert question[1] == "  touch SPOOFED #↵"
        assert question[2] == "  \\x1b[1A\\x1b[2K\\x1b[1Gls -la"
        assert "  ls -la" not in question  # the spoof's picture of the question
        repl.keys("n")
        repl.wait_for("→ deny")
        repl.wait_for("normal ›", times=2)
    finally:
        repl.close()
    assert not (project / "SPOOFED").exists()
