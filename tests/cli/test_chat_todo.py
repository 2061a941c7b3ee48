"""The REPL shows which instruction files it loaded, and the agent's todo list as a
checklist above the prompt (a real pty, the fake LLM server)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.chat_pty import PROMPT, saved_thread, spawn
from tests.support.loom_cli import loom_in_process
from tests.support.wire import system_of


def item(mark: str, text: str) -> str:
    """A checklist line, styles (bold, dim) allowed between the mark and the text."""
    return re.escape(mark) + r" (?:\x1b\[[0-9;]*m)*" + re.escape(text)


def test_header_names_agents_md_and_the_checklist_shows_progress(
    server: FakeLlmServer, project: Path
) -> None:
    (project / "AGENTS.md").write_text("Keep answers short.\n")
    plan = [{"content": "Read notes.txt", "status": "in_progress"},
            {"content": "Answer the question", "status": "pending"}]  # fmt: skip
    done = [{"content": "Read notes.txt", "status": "completed"},
            {"content": "Answer the question", "status": "in_progress"}]  # fmt: skip
    server.add(Turn(tool_calls=[FakeToolCall("todo_write", {"todos": plan})]))
    server.add(Turn(tool_calls=[FakeToolCall("file_read", {"path": "notes.txt"}),
                                FakeToolCall("todo_write", {"todos": done})]))  # fmt: skip
    server.add(Turn(text="It says one."))
    child = spawn([], project, server)
    child.expect("instructions: AGENTS.md")
    child.expect(PROMPT)
    child.sendline("what does notes.txt say?")
    child.expect(r"● todo_write ([^\r\n]*)\r?\n")  # the call, as its items, not its JSON
    assert isinstance(child.match, re.Match)
    assert child.match.group(1) == "0/2 done: [~] Read notes.txt · [ ] Answer the question"
    child.expect(r"Todo \(0/2 done\)")
    child.expect(item("[~]", "Read notes.txt"))
    child.expect(item("[ ]", "Answer the question"))
    child.expect(r"Todo \(1/2 done\)")
    child.expect(item("[x]", "Read notes.txt"))
    child.expect(item("[~]", "Answer the question"))
    child.expect("It says one.")
    child.expect(PROMPT)
    child.sendeof()
    thread = saved_thread(child)
    assert thread["todos"] == done
    assert "Keep answers short." in system_of(server.requests[0])


def test_a_resumed_thread_shows_its_unfinished_checklist_above_the_prompt(
    server: FakeLlmServer, project: Path
) -> None:
    plan = [{"content": "Read notes.txt", "status": "completed"},
            {"content": "Write the summary", "status": "in_progress"}]  # fmt: skip
    server.add(Turn(tool_calls=[FakeToolCall("todo_write", {"todos": plan})]))
    server.add(Turn(text="Stopping here."))
    first = loom_in_process(["run", "-p", "summarise", "-o", "json"], project, server)
    assert first.returncode == 0, first.stderr
    child = spawn(["resume", json.loads(first.stdout)["thread_id"]], project, server)
    child.expect("Stopping here.")  # the recap, then the plan where it was left
    child.expect(r"Todo \(1/2 done\)")
    child.expect(item("[x]", "Read notes.txt"))
    child.expect(item("[~]", "Write the summary"))
    child.expect(PROMPT)
    child.sendeof()
    saved_thread(child)
