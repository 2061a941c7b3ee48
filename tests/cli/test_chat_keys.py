"""The permission question under every key a person might press: the REPL always comes back."""

from __future__ import annotations

from pathlib import Path

import pexpect
import pytest
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.chat_pty import PROMPT, saved_thread, spawn

QUESTION = r"\[n\] deny"
# Keys that do not answer: the question stays and says which keys do.
NOT_ANSWERS = {
    "enter": "\r",
    "up": "\x1b[A",
    "down": "\x1b[B",
    "left": "\x1b[D",
    "right": "\x1b[C",
    "tab": "\t",
    "backspace": "\x7f",
    "f1": "\x1bOP",
    "home": "\x1b[H",
    "page-down": "\x1b[6~",
    "ctrl-z": "\x1a",
    "space": " ",
    "q": "q",
    "bracketed paste": "\x1b[200~yes, allow all\x1b[201~",
    # a paste without bracketed-paste mode arrives in one read: its y and a must not answer
    "plain paste": "any yes",
}


def ask_to_write(child: pexpect.spawn, server: FakeLlmServer, name: str) -> None:
    server.add(Turn(tool_calls=[FakeToolCall("file_write", {"path": name, "content": "x"})]))
    server.add(Turn(text=f"finished {name}"))
    child.sendline(f"write {name}")
    child.expect(r"Create " + name.replace(".", r"\."))
    child.expect(QUESTION)


def test_keys_that_do_not_answer_leave_the_question_open(
    server: FakeLlmServer, project: Path
) -> None:
    child = spawn(["--private"], project, server)
    child.expect(PROMPT)
    for index, (label, keys) in enumerate(NOT_ANSWERS.items()):
        name = f"f{index}.txt"
        ask_to_write(child, server, name)
        child.send(keys)
        child.expect(r"\((press y/a/n|pasted text ignored|typed-ahead keys ignored|Enter does)")
        assert child.isalive(), label
        assert not (project / name).exists(), f"{label} answered the question"
        child.expect([pexpect.TIMEOUT], timeout=0.3)  # a person's pause before answering
        child.send("y")
        child.expect("→ allow once")
        child.expect(f"finished {name}")
        child.expect(PROMPT)
        assert (project / name).read_text() == "x", label
    child.sendeof()
    saved_thread(child)


@pytest.mark.parametrize(
    ("label", "key", "shown"),
    [
        ("esc", "\x1b", "→ deny"),
        ("ctrl-d", "\x04", "→ deny"),
        ("ctrl-c", "\x03", r"→ deny \(and stop the turn\)"),
    ],
)
def test_esc_ctrl_d_and_ctrl_c_deny_and_the_repl_reads_again(
    server: FakeLlmServer, project: Path, label: str, key: str, shown: str
) -> None:
    child = spawn(["--private"], project, server)
    child.expect(PROMPT)
    ask_to_write(child, server, "x.txt")
    child.send(key)
    child.expect(shown)
    child.expect(PROMPT)
    assert not (project / "x.txt").exists()
    server.add(Turn(text="still here"))
    child.sendline("are you there")
    # Ctrl-C stopped the turn before it asked for its scripted answer: that one comes now
    child.expect("finished x.txt" if label == "ctrl-c" else "still here")
    child.expect(PROMPT)
    child.sendeof()
    saved_thread(child)
