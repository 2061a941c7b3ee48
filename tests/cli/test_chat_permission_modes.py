"""Permission modes in the REPL (a real pty, the fake LLM server): Shift-Tab and /mode
switch them; in plan mode the agent's plan (its todo list) is approved, then carried out."""

from __future__ import annotations

from pathlib import Path

import pexpect
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.chat_pty import PROMPT, spawn

SHIFT_TAB = "\x1b[Z"
PLAN = [{"content": "Write x.txt", "status": "pending"}]
DONE = [{"content": "Write x.txt", "status": "completed"}]


def test_shift_tab_to_plan_then_approve_and_the_plan_is_carried_out(
    server: FakeLlmServer, project: Path
) -> None:
    write = FakeToolCall("file_write", {"path": "x.txt", "content": "x"})
    server.add(Turn(tool_calls=[write]))  # refused: planning
    server.add(Turn(tool_calls=[FakeToolCall("todo_write", {"todos": PLAN})]))
    server.add(Turn(text="Plan: write x.txt."))
    server.add(Turn(tool_calls=[write, FakeToolCall("todo_write", {"todos": DONE})]))
    server.add(Turn(text="Done."))
    child = spawn([], project, server)
    child.expect(PROMPT)
    child.send(SHIFT_TAB)
    child.expect("permission mode: acceptEdits")
    child.send(SHIFT_TAB)
    child.expect("permission mode: plan")
    child.sendline("add x.txt")
    child.expect("Plan: write x.txt.")
    child.expect(r"Carry out this plan\?")
    assert not (project / "x.txt").exists()
    child.send("y")
    child.expect("permission mode: default")
    child.expect(r"Allow|allow")  # default mode: the write asks now
    child.send("y")
    child.expect("Done.")
    child.expect(PROMPT)
    child.sendeof()
    child.expect(pexpect.EOF)
    assert (project / "x.txt").read_text() == "x"
    planning = server.requests[1].json["messages"]
    assert "plan mode" in str(planning[-1]["content"])  # the refusal the model read
    approved = server.requests[3].json["messages"][-1]["content"]
    assert "plan is approved" in str(approved) and "Write x.txt" in str(approved)


def test_mode_command_shows_and_sets_and_refuses_a_bad_name(
    server: FakeLlmServer, project: Path
) -> None:
    child = spawn([], project, server)
    child.expect(PROMPT)
    child.sendline("/mode")
    child.expect("permission mode: default \\(one of default, acceptEdits, plan")
    child.sendline("/mode yolo")
    child.expect("unknown permission mode 'yolo'")
    child.sendline("/mode acceptEdits")
    child.expect("permission mode: acceptEdits \\(file edits")
    child.expect(r"normal \[acceptEdits\] ›")
    child.sendeof()
