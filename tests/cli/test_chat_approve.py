"""See what you approve: the diff of an edit, a new file's content (folded, paged with
[v]), the exact command and its folder, and in words what `a` would cover."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.chat_pty import PROMPT, saved_thread, spawn
from tests.support.loom_cli import loom_in_process


def call(name: str, **arguments: object) -> Turn:
    return Turn(tool_calls=[FakeToolCall(name, arguments)])


def test_the_question_shows_the_change_the_command_and_the_grant(
    server: FakeLlmServer, project: Path
) -> None:
    (project / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    long_text = "".join(f"line {n}\n" for n in range(1, 81))
    server.add(call("file_edit", path="calc.py", old_string="a + b", new_string="b + a"))
    server.add(call("file_write", path="long.txt", content=long_text))
    server.add(call("shell", command="python3 -m pytest -q"))
    server.add(call("shell", command="python3 build.py --fast"))
    server.add(Turn(text="all done"))
    os.environ["PAGER"] = "cat"  # [v] pages through cat: the whole text, then back
    try:
        child = spawn([], project, server)
    finally:
        del os.environ["PAGER"]
    child.expect(PROMPT)
    child.sendline("go")

    child.expect("Edit calc.py")
    child.expect(r"-    return a \+ b")
    child.expect(r"\+    return b \+ a")
    child.expect(r"\[a\] always: file_edit on calc\.py in this project")
    child.send("y")
    child.expect("● file_edit calc.py")
    child.expect("Create long.txt")
    assert child.before is not None
    assert "return b + a" not in child.before  # the question showed the diff: not again
    child.expect("line 30")
    child.expect(r"… 50 more lines \(\[v\] shows them all\)")
    child.expect(r"\[v\] view all")
    child.send("v")
    child.expect("line 80")  # the pager showed the whole file
    child.expect(r"\[v\] view all")  # and the question is asked again
    child.send("n")
    child.expect("→ deny")

    child.expect("Run a shell command")
    child.expect("python3 -m pytest -q")
    child.expect("in " + str(project.resolve()))
    child.expect(r"\[a\] always: every `python3 -m pytest \.\.\.` command in this project")
    child.send("a")
    child.expect(r"→ allow always: every `python3 -m pytest \.\.\.` command")

    child.expect("python3 build.py --fast")
    # an interpreter's name alone is never granted: `a` covers this exact command...
    child.expect(r"\[a\] always: exactly `python3 build\.py --fast` in this project")
    child.expect(r"\[p\] always, for a prefix you type")
    child.send("p")  # ...or a prefix the person types
    # the prefix prompt itself: the question above also says "prefix"
    child.expect(r"prefix \(Enter accepts, Esc goes back\)")
    child.send("\x17")  # Ctrl-W: drop the last word
    child.send("\r")
    child.expect(r"→ allow always: every `python3 build\.py \.\.\.` command in this project")
    child.expect("all done")
    child.expect(PROMPT)
    child.sendeof()
    saved_thread(child)
    assert (project / "calc.py").read_text() == "def add(a, b):\n    return b + a\n"
    assert not (project / "long.txt").exists()

    listed = loom_in_process(["permissions", "list", "--json"], project, server)
    grants = {(g["scope_kind"], g["scope"]) for g in json.loads(listed.stdout)}
    assert grants == {("prefix", "python3 -m pytest"), ("prefix", "python3 build.py")}
