"""The REPL's small rough edges a new user met (issue 26, "Smaller things"): the hidden
exit-code line counted as output, a stray comma in the spinner, a diff printed twice,
two alignments in /help, raw Markdown in the resume recap."""

from __future__ import annotations

import re
from pathlib import Path

import pexpect
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.chat_pty import PROMPT, saved_thread, spawn

from loom.core.messages import AssistantMessage, UserMessage
from loom.core.thread import Thread
from loom.store.local import LocalThreadStore

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def plain(text: str) -> str:
    return ANSI.sub("", text).replace("\r", "")


def test_tool_lines_spinner_diff_and_help(server: FakeLlmServer, project: Path) -> None:
    (project / "app.py").write_text("def main():\n    return 1\n")
    edit = {"path": "app.py", "old_string": "return 1", "new_string": "return 2"}
    server.add(
        Turn(tool_calls=[FakeToolCall("shell", {"command": "sleep 3 && echo hi"})]),
        Turn(tool_calls=[FakeToolCall("file_edit", edit)]),
        Turn(text="Done."),
    )
    child = spawn([], project, server)
    child.timeout = 90  # a loaded machine: the first session start imports the SDK
    child.expect(PROMPT)
    child.sendline("go")
    child.expect(r"\[n\] deny")
    child.send("y")
    # the spinner's progress: no ", " after a command that printed nothing yet
    child.expect(r"\(sleep 3 && echo hi: 2 s[^)]*\)", timeout=20)
    assert isinstance(child.after, str)
    assert child.after.endswith(": 2 s)"), child.after
    child.expect(r"⎿ hi[^\n]*\n", timeout=20)
    assert "lines)" not in child.after  # the `[exit code 0]` line is not output
    child.expect(r"\[n\] deny")
    assert child.before is not None
    shown_at_the_question = plain(child.before)
    child.send("y")
    child.expect("Done.")
    after_the_answer = plain(child.before)
    assert shown_at_the_question.count("+    return 2") == 1
    assert "+    return 2" not in after_the_answer  # the applied diff: the same, not again
    assert (project / "app.py").read_text() == "def main():\n    return 2\n"
    child.expect(PROMPT)
    child.sendline("/help")
    child.expect("Ctrl-C interrupts the current turn")
    listed = [line for line in plain(child.before).splitlines() if line.startswith("/")]
    assert {"/model", "/undo", "/compact", "/help"} <= {line.split()[0] for line in listed}
    columns = {len(line) - len(line[14:].lstrip()) for line in listed}
    assert {line[13] for line in listed} == {" "} and len(columns) == 1, listed
    child.expect(PROMPT)
    child.sendeof()
    saved_thread(child)


def test_the_resume_recap_shows_markdown_rendered_and_long_messages_folded(
    server: FakeLlmServer, project: Path
) -> None:
    thread = Thread.new(workspace_root=str(project))
    thread.append(UserMessage(content="explain\n" + "line of a long paste\n" * 500))
    thread.append(AssistantMessage(content="It is **bold** and has `code`:\n\n- one\n- two"))
    thread.touch()
    store = LocalThreadStore()
    store.save(thread)
    store.close()
    child = spawn(["resume", thread.id], project, server)
    child.timeout = 90  # a loaded machine: the first session start imports the SDK
    child.expect(r"you: (?:\x1b\[[0-9;]*m)*explain")
    child.expect(r"… [\d,]+ more characters")  # the long paste, folded
    assert child.before is not None
    assert plain(child.before).count("line of a long paste") <= 20
    child.expect("loom:")
    child.expect(PROMPT)
    recap = plain(child.before)
    assert "It is bold and has code" in recap and "**" not in recap and "`" not in recap
    assert "- one" not in recap  # a list, rendered
    child.sendeof()
    child.expect(pexpect.EOF)
