"""/undo, /redo and /rewind in the REPL, through a real pty (the keys people press)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.chat_pty import PROMPT, saved_thread, spawn
from tests.support.loom_cli import loom_in_process


def _write_turn(server: FakeLlmServer, path: str, content: str) -> None:
    server.add(Turn(tool_calls=[FakeToolCall("file_write", {"path": path, "content": content})]))
    server.add(Turn(text=f"Wrote {path}."))


def _allow(child, path: str) -> None:
    child.expect(rf"(Create|Overwrite) {path}")  # the question shows the content or diff
    child.expect(r"\[y\] once")
    child.send("y")
    child.expect(f"Wrote {path}.")
    child.expect(PROMPT)


def test_rewind_both_keeps_the_messages_and_hides_them_from_the_model(
    server: FakeLlmServer, project: Path
) -> None:
    _write_turn(server, "a.txt", "A")
    _write_turn(server, "b.txt", "B")
    server.add(Turn(text="fresh start"))
    child = spawn([], project, server)
    child.expect(PROMPT)
    child.sendline("first task")
    _allow(child, "a.txt")
    child.sendline("second task")
    _allow(child, "b.txt")

    child.sendline("/rewind")
    child.expect(r"1\. first task \[files changed\]")
    child.expect(r"2\. second task \[files changed\]")
    child.expect("Rewind to before which turn")
    child.sendline("2")
    child.expect(r"Restore \[b\]oth")
    child.sendline("")
    child.expect("Rewound: 1 file")
    child.expect("D b.txt")
    child.expect(r"4 message\(s\) set aside")
    child.expect(PROMPT)
    assert not (project / "b.txt").exists() and (project / "a.txt").read_text() == "A"

    child.sendline("third task")
    child.expect("fresh start")
    child.expect(PROMPT)
    sent = json.dumps(server.requests[-1].json["messages"])
    assert "first task" in sent and "third task" in sent
    assert "second task" not in sent and "b.txt" not in sent  # the side branch is not sent

    child.sendline("/undo")  # takes back the first turn (the second is rewound already)
    child.expect("Undid: 1 file")
    child.expect(PROMPT)
    assert not (project / "a.txt").exists()
    child.sendline("/redo")
    child.expect("Redid: 1 file")
    child.expect(PROMPT)
    assert (project / "a.txt").read_text() == "A"
    child.sendeof()
    thread = saved_thread(child)
    contents = [m["content"] for m in thread["conversation"]["messages"]]
    assert "second task" in contents  # nothing is ever lost
    (branch,) = thread["side_branches"]
    assert contents[branch["start"]] == "second task" and branch["end"] - branch["start"] == 4


def test_undo_asks_before_overwriting_a_hand_edit(server: FakeLlmServer, project: Path) -> None:
    _write_turn(server, "app.py", "agent\n")
    child = spawn([], project, server)
    child.expect(PROMPT)
    child.sendline("rewrite app")
    _allow(child, "app.py")
    (project / "app.py").write_text("mine\n")
    child.sendline("/undo")
    child.expect("changed by hand")
    child.expect("app.py")
    child.expect(r"Overwrite them\? \[y/N\]")
    child.send("n")  # one key, as a person answers (Enter would reach the prompt)
    child.expect("undo cancelled")
    child.expect(PROMPT)
    assert (project / "app.py").read_text() == "mine\n"
    child.sendline("/undo")
    child.expect(r"Overwrite them\? \[y/N\]")
    child.send("y")
    child.expect("Undid: 1 file")
    child.expect(PROMPT)
    assert (project / "app.py").read_text() == "def main():\n    return 1\n"
    child.sendeof()
    saved_thread(child)


def test_tab_completes_an_at_mention_from_the_project_files(
    server: FakeLlmServer, project: Path
) -> None:
    (project / "src").mkdir()
    (project / "src" / "parser_module.py").write_text("def parse():\n    return 42\n")
    server.add(Turn(text="It returns 42."))
    child = spawn([], project, server)
    child.expect(PROMPT)
    child.send("explain @src/pars")
    child.send("\t")
    child.expect("er_module.py")  # the completion is typed in after "@src/pars"
    child.send("\r")
    child.expect("It returns 42.")
    child.expect(PROMPT)
    sent = json.dumps(server.requests[-1].json["messages"])
    assert "@src/parser_module.py" in sent and "return 42" in sent
    child.sendline("about @src/gone.py")
    child.expect("no such file")
    child.expect(PROMPT)
    assert len(server.requests) == 1
    child.sendeof()
    saved_thread(child)


def test_loom_show_hides_the_side_branch_unless_all(server: FakeLlmServer, project: Path) -> None:
    _write_turn(server, "a.txt", "A")
    _write_turn(server, "b.txt", "B")
    child = spawn([], project, server)
    child.expect(PROMPT)
    child.sendline("first task")
    _allow(child, "a.txt")
    child.sendline("second task")
    _allow(child, "b.txt")
    child.sendline("/rewind")
    child.expect("Rewind to before which turn")
    child.sendline("2")
    child.expect(r"Restore \[b\]oth")
    child.sendline("o")  # the conversation only: b.txt stays
    child.expect(r"4 message\(s\) set aside")
    child.expect(PROMPT)
    assert (project / "b.txt").exists()
    child.sendeof()
    thread = saved_thread(child)
    shown = loom_in_process(["show", thread["id"]], project, server)
    assert "first task" in shown.stdout and "second task" not in shown.stdout
    assert "4 rewound message(s)" in shown.stdout
    everything = loom_in_process(["show", "--all", thread["id"]], project, server)
    assert "second task" in everything.stdout and "side branch" in everything.stdout


def test_rewind_and_overwrite_take_one_key_as_permission_questions_do(
    server: FakeLlmServer, project: Path
) -> None:
    _write_turn(server, "a.txt", "A")
    _write_turn(server, "b.txt", "B")
    child = spawn([], project, server)
    child.expect(PROMPT)
    child.sendline("first task")
    _allow(child, "a.txt")
    child.sendline("second task")
    _allow(child, "b.txt")
    (project / "b.txt").write_text("mine")
    child.sendline("/rewind")
    child.expect(r"Rewind to before which turn\? \(1-2; Enter or Esc cancels\)")
    child.send("2")  # no Enter
    child.expect("→ turn 2")
    child.expect(r"Restore \[b\]oth")
    child.send("c")
    child.expect("→ code")
    child.expect(r"Overwrite them\? \[y/N\]")
    child.send("y")
    child.expect("Rewound: 1 file")
    child.expect(PROMPT)
    assert not (project / "b.txt").exists() and (project / "a.txt").read_text() == "A"
    child.sendline("/rewind")
    child.expect("Rewind to before which turn")
    child.send("\x1b")  # Esc cancels
    child.expect(PROMPT)
    assert (project / "a.txt").exists()
    child.sendeof()
    thread = saved_thread(child)
    assert not thread.get("side_branches")  # code only: the conversation is as it was
