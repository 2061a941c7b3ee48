"""The REPL as a person uses it: architect plans approved, `loom -c`, the resume picker,
slash commands with Tab completion, custom commands, Markdown answers, early typing."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.chat_pty import PROMPT, saved_thread, spawn
from tests.support.loom_cli import loom_in_process
from tests.support.mcp import define_helper_server

if TYPE_CHECKING:
    from pexpect import EOF

PLAN = {
    "summary": "Add a greeting module",
    "steps": [{"file": "greet.py", "action": "create", "description": "a hello() function"}],
}


def test_architect_plan_declined_then_changed_then_carried_out(
    server: FakeLlmServer, project: Path
) -> None:
    revised = {**PLAN, "summary": "Add a greeting module in French"}
    server.add(Turn(text=json.dumps(PLAN)))  # declined with n
    server.add(Turn(text=json.dumps(PLAN)))  # edited with e
    server.add(Turn(text=json.dumps(revised)))
    write = {"path": "greet.py", "content": "def hello():\n    return 'salut'\n"}
    server.add(Turn(tool_calls=[FakeToolCall("file_write", write)]))
    server.add(Turn(text="Created greet.py."))
    child = spawn(["--private"], project, server)
    child.expect(PROMPT)
    child.sendline("/architect")
    child.expect("architect ›")
    child.sendline("add a greeting")
    child.expect("Plan: Add a greeting module")
    child.expect(r"Carry out this plan\?")
    child.send("\r")  # Enter is not an answer
    child.expect(r"Enter does not answer")
    child.send("n")
    child.expect("Plan declined")
    child.expect("architect ›")
    assert not (project / "greet.py").exists()

    child.sendline("add a greeting")
    child.expect(r"Carry out this plan\?")
    child.send("e")
    child.expect("what should change")
    child.sendline("say it in French")
    child.expect("Plan: Add a greeting module in French")
    child.expect(r"Carry out this plan\?")
    child.send("y")
    child.expect(r"\[y\] once")
    child.send("y")
    child.expect("Step 1/1 greet.py: completed")
    child.expect("architect ›")
    child.sendeof()
    saved_thread(child)
    assert "salut" in (project / "greet.py").read_text()
    change_request = server.requests[2].json["messages"][-1]
    assert "say it in French" in json.dumps(change_request)


def test_continue_opens_the_newest_thread_of_this_project(
    server: FakeLlmServer, project: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    server.add(Turn(text="older answer"), Turn(text="newer answer"), Turn(text="elsewhere"))
    for prompt, where in (("older", project), ("newer", project), ("other", other)):
        assert loom_in_process(["run", "-p", prompt], where, server).returncode == 0
    server.add(Turn(text="carried on"))
    child = spawn(["-c"], project, server)
    child.expect(r"you: \S*newer")  # this project's newest, not the other folder's
    child.expect(PROMPT)
    child.sendline("and now?")
    child.expect("carried on")
    child.expect(PROMPT)
    child.sendeof()
    thread = saved_thread(child)
    contents = [m["content"] for m in thread["conversation"]["messages"]]
    assert contents == ["newer", "newer answer", "and now?", "carried on"]

    nothing = tmp_path / "empty"
    nothing.mkdir()
    child = spawn(["--continue"], nothing, server)
    child.expect("no thread of this project")
    child.expect(r"\$|\Z|" + "loom")
    child.wait()


def test_resume_without_an_id_picks_from_a_list(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(text="about apples"), Turn(text="about pears"))
    assert loom_in_process(["run", "-p", "tell me about apples"], project, server).returncode == 0
    assert loom_in_process(["run", "-p", "tell me about pears"], project, server).returncode == 0
    server.add(Turn(text="back to apples"))
    child = spawn(["resume"], project, server)
    child.expect("Resume which thread")
    child.expect(r"tell me about pears  \(.*, 2 messages\)")  # newest first
    child.send("appl")  # type to filter
    child.expect("1 of 2 threads")
    child.send("\r")
    child.expect("Resuming thread")
    child.expect(r"you: \S*tell me about apples")
    child.expect(PROMPT)
    child.sendline("more")
    child.expect("back to apples")
    child.expect(PROMPT)
    child.sendeof()
    saved_thread(child)

    piped = loom_in_process(["resume"], project, server)
    assert piped.returncode == 2 and "give a thread ID" in piped.stderr


def test_slash_commands_tab_completion_and_custom_commands(
    server: FakeLlmServer, project: Path
) -> None:
    subprocess.run(["git", "-C", str(project), "add", "."], check=True)
    subprocess.run(
        ["git", "-C", str(project), "-c", "user.email=a@b", "-c", "user.name=a",
         "commit", "-qm", "start"],
        check=True,
    )  # fmt: skip
    commands = project / ".loom" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("Review $ARGUMENTS for bugs, briefly.\n")
    (project / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    server.add(Turn(text="# Answer\n\nSee:\n\n```python\nprint('hi')\n```\n\nDone **now**."))
    server.add(Turn(tool_calls=[FakeToolCall("shell", {"command": "git status --short"})]))
    server.add(Turn(text="Looks fine."))
    child = spawn([], project, server)
    child.expect(PROMPT)
    child.sendline("first")  # typed at once: waits for the session, then runs
    child.expect("print\\('hi'\\)")  # Markdown: the code, without its fences
    child.expect("Done")
    child.expect(PROMPT)
    assert child.before is not None
    assert "```" not in child.before

    child.send("/di\t")  # Tab completes the command...
    child.expect("ff")
    child.send("\r")
    # ...else this would be "unknown command /di"; calc.py is the person's, not the thread's
    child.expect("this thread changed nothing since")
    child.expect(PROMPT)

    child.sendline("/help")
    child.expect(r"/review\s+Review \$ARGUMENTS")
    child.expect(PROMPT)
    child.sendline("/review calc.py")
    child.expect(r"\[a\] always: every `git status \.\.\.` command")
    child.send("a")
    child.expect("Looks fine.")
    child.expect(PROMPT)
    sent = json.dumps(server.requests[1].json["messages"][-1])
    assert "Review calc.py for bugs, briefly." in sent

    child.sendline("/permissions")
    child.expect(r"shell\s+commands starting with `git status`")
    child.sendline("/cost")
    # the provider's prompt cache's part, when it served any (tests/fakes/prompt_cache.py)
    cached = r"(?: \(cache \d+%: [\d,]+ read, [\d,]+ written\))?"
    child.expect(rf"This session: [\d,]+ tokens in{cached}, [\d,]+ out; cost \$\d")
    child.sendline("/init")
    child.expect("Wrote .*AGENTS.md")
    child.expect(PROMPT)
    child.sendline("/clear")
    child.expect(r"New thread\. The previous one is kept: loom resume (T-[0-9a-f-]+)")
    assert isinstance(child.match, re.Match)
    old_thread = child.match.group(1)
    child.expect(PROMPT)
    server.add(Turn(text="fresh start"))
    child.sendline("hello again")
    child.expect("fresh start")
    child.expect(PROMPT)
    child.sendeof()
    thread = saved_thread(child)
    assert thread["id"] != old_thread
    assert [m["content"] for m in thread["conversation"]["messages"]] == [
        "hello again",
        "fresh start",
    ]
    agents_md = (project / "AGENTS.md").read_text()
    assert "calc.py" in agents_md and "## Build and test" in agents_md


def test_decisions_command_shows_the_graph(server: FakeLlmServer, project: Path) -> None:
    server.add(
        Turn(tool_calls=[FakeToolCall("decision_log", {"type": "goal", "title": "Ship it"})]),
        Turn(text="Logged the goal."),
    )
    child = spawn([], project, server)
    child.expect(PROMPT)
    child.sendline("plan")
    child.expect("Logged the goal.")
    child.expect(PROMPT)
    child.sendline("/decisions")
    child.expect(r"(D-[0-9a-f]+)\s+goal\s+70\s+Ship it")
    assert isinstance(child.match, re.Match)
    node = child.match.group(1)
    child.expect(PROMPT)
    child.sendline(f"/decisions {node}")
    child.expect(r"active, confidence 70")
    child.expect(PROMPT)
    child.sendline("/decisions pulse")
    child.expect(r"health \d+/100")
    child.expect(PROMPT)
    child.sendline("/decisions D-nothing")
    child.expect("error: no decision-graph node")
    child.expect(PROMPT)
    child.sendeof()
    child.expect_exact(pexpect_eof())


def pexpect_eof() -> type[EOF]:
    import pexpect

    return pexpect.EOF


def test_a_projects_mcp_server_is_asked_about_then_approved_with_slash_mcp(
    server: FakeLlmServer, project: Path
) -> None:
    define_helper_server(project)
    server.add(
        Turn(tool_calls=[FakeToolCall("mcp__helper__echo", {"text": "approved later"})]),
        Turn(text="It echoed."),
    )
    child = spawn([], project, server)
    child.expect("sets what only a trusted project may:")  # the trust question, first
    child.expect(r"mcpServers.helper: MCP server\s+\[.mcp.json\]")
    child.expect(r"runs: \S+ \S+bad_mcp_server.py")  # the program and its arguments
    child.expect(r"Trust this project\? \[y/N\]")
    child.sendline("")  # Enter: no
    child.expect("Not trusted: Loom ignores these settings here")
    child.expect(r"ignored mcpServers.helper \(.mcp.json\); review and trust")  # header
    child.expect(PROMPT)
    assert child.before is not None
    assert "not started:" not in child.before  # said once, not again by the session
    child.sendline("/mcp")
    child.expect(r"helper\s+needs approval")
    child.expect(r"runs: \S+ \S+bad_mcp_server.py")  # what approving it lets it run
    child.expect("Start one the project defines with /mcp approve NAME.")
    child.expect(PROMPT)
    child.sendline("/mcp approve nobody")
    child.expect("error: no MCP server 'nobody' is waiting for approval")
    child.expect(PROMPT)
    child.sendline("/mcp approve helper")
    child.expect("Approved 'helper' for this project; starting:")
    child.expect(PROMPT)
    child.sendline("echo something")
    child.expect(r"\[y\] once")  # its tools ask like any other
    child.send("y")
    child.expect("It echoed.")
    child.expect(PROMPT)
    child.sendline("/mcp")
    child.expect(r"helper\s+ready\s+\d+ tools")
    child.expect(PROMPT)
    child.sendeof()
    child.expect_exact(pexpect_eof())
    assert "echo: approved later" in json.dumps(server.requests[-1].json["messages"])
