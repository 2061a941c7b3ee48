"""The REPL (`loom`) driven through a real pty against the fake LLM server."""

from __future__ import annotations

import json
from pathlib import Path

import pexpect
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.chat_pty import PROMPT, saved_thread, spawn
from tests.support.loom_cli import loom_in_process


def test_chat_streams_asks_permission_and_runs_slash_commands(
    server: FakeLlmServer, project: Path
) -> None:
    server.add(Turn(text=["Hello ", "there, ", "friend."]))
    server.add(Turn(tool_calls=[FakeToolCall("file_write", {"path": "a.txt", "content": "A"})]))
    server.add(Turn(text="Wrote a.txt."))
    server.add(Turn(tool_calls=[FakeToolCall("file_write", {"path": "b.txt", "content": "B"})]))
    server.add(Turn(text="Left b.txt alone."))
    server.add(Turn(text="from openai"))
    child = spawn([], project, server)
    child.expect(PROMPT)
    child.sendline("say hello")
    child.expect("Hello there, friend.")
    child.expect(PROMPT)

    child.sendline("write a")
    child.expect(r"Create a\.txt")
    child.expect(r"\[y\] once")
    child.send("y")
    child.expect("● file_write a.txt")
    child.expect("Wrote a.txt.")
    child.expect(PROMPT)
    assert (project / "a.txt").read_text() == "A"

    child.sendline("write b")
    child.expect(r"\[n\] deny")
    child.send("n")
    child.expect("Left b.txt alone.")
    child.expect(PROMPT)
    assert not (project / "b.txt").exists()

    child.sendline("/model nonsense")
    child.expect("has no provider")
    child.sendline("/model openai:gpt-5")
    child.expect("model: openai:gpt-5")
    child.sendline("who are you")
    child.expect("from openai")
    child.expect(PROMPT)
    assert server.requests[-1].format == "responses"  # openai speaks the Responses API

    child.sendline("/architect")
    child.expect("mode: architect")
    child.expect("architect ›")
    child.sendline("/normal")
    child.expect("mode: normal")
    child.sendline("/history")
    child.expect(r"you: \S*say hello")
    child.expect("● file_write b.txt")
    child.sendline("/help")
    child.expect("/exit")
    child.sendline("/bogus")
    child.expect("unknown command /bogus")
    child.expect(PROMPT)  # Ctrl-D typed ahead of the prompt would go to the cooked tty
    child.sendeof()  # Ctrl-D
    thread = saved_thread(child)
    roles = [m["role"] for m in thread["conversation"]["messages"]]
    assert roles == [
        "user",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
    ]
    denied = thread["conversation"]["messages"][8]
    assert denied["is_error"] is True and "did not allow" in denied["content"]


def test_architect_mode_plans_then_edits(server: FakeLlmServer, project: Path) -> None:
    plan = {
        "summary": "Add a greeting module",
        "steps": [{"file": "greet.py", "action": "create", "description": "a hello() function"}],
    }
    server.add(Turn(text=json.dumps(plan)))
    server.add(
        Turn(
            tool_calls=[
                FakeToolCall(
                    "file_write", {"path": "greet.py", "content": "def hello():\n    return 'hi'\n"}
                )
            ]
        )
    )
    server.add(Turn(text="Created greet.py."))
    child = spawn([], project, server)
    child.expect(PROMPT)
    child.sendline("/architect")
    child.expect("architect ›")
    child.sendline("add a greeting")
    child.expect("Plan: Add a greeting module")
    child.expect(r"1\. \[create\] greet\.py: a hello\(\) function")
    child.expect(r"Carry out this plan\? \[y\] yes")
    child.send("y")
    child.expect("Step 1/1 greet.py: started")
    child.expect(r"\[y\] once")
    child.send("y")
    child.expect("Step 1/1 greet.py: completed")
    child.expect("Carried out 1 of 1 steps")
    child.expect("architect ›")
    child.sendeof()
    saved_thread(child)
    assert (project / "greet.py").read_text() == "def hello():\n    return 'hi'\n"
    models = [r.json["model"] for r in server.requests]
    assert models == ["claude-opus-4-6", "claude-haiku-4-5", "claude-haiku-4-5"]


def test_ctrl_c_interrupts_the_turn_not_the_program(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(text="too slow", delay=20))
    server.add(Turn(text="second answer"))
    server.add(Turn(status=401, error_message="bad key"))
    child = spawn(["--private"], project, server)
    child.expect(PROMPT)
    child.sendline("take your time")
    child.expect(r"\r\n")  # the line was submitted
    while not server.requests:
        child.expect([pexpect.TIMEOUT], timeout=0.1)
    child.sendintr()  # Ctrl-C
    child.expect("interrupted")
    child.expect(PROMPT)
    child.sendline("again")
    child.expect("second answer")
    child.expect(PROMPT)
    child.sendline("third")  # a permanent model error ends the turn, not the REPL
    child.expect(r"error \(Llm\): .*bad key")
    child.expect(r"check the API key \(ANTHROPIC_API_KEY\)")  # no retry: it cannot help
    child.expect(PROMPT)
    child.sendline("/exit")
    cached = r"(?: \(cache \d+%: [\d,]+ read, [\d,]+ written\))?"  # the prompt cache's part
    child.expect(rf"This session: [\d,]+ tokens in{cached}, [\d,]+ out, \$\d")
    thread = saved_thread(child)
    assert thread["is_private"] is True
    contents = [m["content"] for m in thread["conversation"]["messages"]]
    assert contents[0] == "take your time" and contents[-1] == "third"


def test_resume_shows_the_summary_then_continues(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(text="first"))
    first = loom_in_process(["run", "-p", "remember 7", "-o", "json"], project, server)
    assert first.returncode == 0, first.stderr
    thread_id = json.loads(first.stdout)["thread_id"]
    server.add(Turn(text="it was 7"))
    child = spawn(["resume", thread_id[:13]], project, server)
    child.expect(r"Resuming thread: \S*" + thread_id)
    child.expect("Messages: 2")
    child.expect(r"you: \S*remember 7")  # the conversation so far
    child.expect(r"loom:\s*\S*\s*first")  # the answer rendered below its name
    child.expect(PROMPT)
    child.sendline("what was it?")
    child.expect("it was 7")
    child.expect(PROMPT)
    child.sendeof()
    thread = saved_thread(child)
    assert thread["id"] == thread_id and len(thread["conversation"]["messages"]) == 4
    assert "remember 7" in json.dumps(server.requests[-1].json["messages"])


def test_missing_key_is_one_line(server: FakeLlmServer, project: Path) -> None:
    child = spawn(["--model", "google:gemini-2.5-pro"], project, server)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
    assert child.before is not None
    assert "No API key for google" in child.before and "Traceback" not in child.before


async def test_session_from_config_watches_the_repo(project: Path) -> None:
    """What the REPL composes, in process: a Workspace from config -> session with a
    scripted provider, the project's LOOM.md rules in the system prompt, and the repo
    watcher publishing on the workspace's bus."""
    from loom.llm.scripted import ScriptedProvider
    from loom.session import SessionSpec, Workspace

    (project / "LOOM.md").write_text("Always answer in haiku.")
    (project / ".loom.toml").write_text("[repo]\nwatch_enabled = true\n")
    provider = ScriptedProvider(["ok"])
    workspace = Workspace.open(project, provider_factory=lambda _model: provider)
    try:
        session = await workspace.start_session(SessionSpec(model="openai:gpt-5", cwd=project))
        assert await workspace.watch_repo()
        updates = workspace.bus.subscribe("repo:updates")
        (project / "new_module.py").write_text("def fresh():\n    return 1\n")
        update = await updates.get(timeout=15)
        assert "new_module.py" in update.added + update.changed
        assert await session.send_message("hello") == "ok"
        assert "Always answer in haiku." in provider.requests[0].system
        assert [a.thread_id for a in workspace.list_active()] == [session.thread.id]
    finally:
        await workspace.shutdown()
    assert not workspace.repo.watching and workspace.list_active() == []


def test_repl_reads_piped_stdin(server: FakeLlmServer, project: Path) -> None:
    """Without a terminal the REPL reads lines (and permission answers) from stdin."""
    server.add(Turn(tool_calls=[FakeToolCall("file_write", {"path": "p.txt", "content": "P"})]))
    server.add(Turn(text="ok wrote"))
    done = loom_in_process([], project, server, "write p\na\n/history\n")
    assert done.returncode == 0, done.stderr
    assert (project / "p.txt").read_text() == "P"
    assert "→ allow always" in done.stdout and "loom: ok wrote" in done.stdout
    thread_id = done.stdout.split("Thread saved: ")[1].split()[0]
    assert len(thread_id) == 38  # printed whole, never wrapped


def test_resume_after_a_crash_mid_call_continues_the_turn(
    server: FakeLlmServer, project: Path
) -> None:
    """A thread saved while the model was being called (the process died) resumes with
    a hint, and /continue sends the same question again, not a new message."""
    from loom.core.messages import UserMessage
    from loom.core.thread import AgentStateKind, Thread
    from loom.store.local import LocalThreadStore

    thread = Thread.new(workspace_root=str(project), provider="anthropic", model="claude-x")
    thread.append(UserMessage(content="what is six times seven?"))
    thread.agent_state.kind = AgentStateKind.CALLING_LLM
    thread.touch()
    LocalThreadStore().save(thread)
    server.add(Turn(text="forty-two"))
    child = spawn(["resume", thread.id], project, server)
    child.expect("/continue picks it up")
    child.expect(PROMPT)
    child.sendline("/continue")
    child.expect("forty-two")
    child.expect(PROMPT)
    child.sendeof()
    saved = saved_thread(child)
    roles = [m["role"] for m in saved["conversation"]["messages"]]
    assert roles == ["user", "assistant"]
    assert "six times seven" in json.dumps(server.requests[-1].json["messages"])
