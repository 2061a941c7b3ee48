"""The REPL in a terminal, as a person meets it: Ctrl-C, streaming, grants typed at the
question (issue 26, "The terminal")."""

from __future__ import annotations

from pathlib import Path

import pexpect
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.chat_pty import PROMPT, saved_thread, spawn


def test_ctrl_c_stops_a_command_the_person_allowed(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(tool_calls=[FakeToolCall("shell", {"command": "sleep 20; touch finished"})]))
    child = spawn(["--private"], project, server)
    child.expect(PROMPT)
    child.sendline("wait a while")
    child.expect(r"\[n\] deny")
    child.send("y")
    child.expect("→ allow once")
    child.expect("running shell")
    child.send("\x03")
    child.expect("interrupted", timeout=10)
    child.expect(PROMPT, timeout=10)
    assert not (project / "finished").exists()
    child.sendeof()
    saved_thread(child)


def test_a_long_paragraph_shows_as_it_arrives(server: FakeLlmServer, project: Path) -> None:
    # a finished paragraph, then one that keeps coming for a long time (2 s a chunk)
    chunks = ["Intro **paragraph**.\n\n", "Second paragraph starts", " and goes on"]
    chunks += [f" and on ({n})" for n in range(20)] + [" to its end."]
    server.add(Turn(text=chunks, chunk_delay=2))
    child = spawn(["--private"], project, server)
    child.expect(PROMPT, timeout=90)
    child.sendline("tell me")
    child.expect(r"Intro \S*paragraph\S*\.", timeout=90)  # start-up on a busy machine
    assert isinstance(child.after, str)
    assert "**" not in child.after  # rendered as Markdown (bold, not stars)
    child.expect(r"writing \d+\.\ds")  # the spinner, while the next block is awaited
    # the open paragraph shows long before it ends (its end comes 46 s after the intro)
    child.expect("Second paragraph starts", timeout=30)
    child.expect(r"and on \(1\)", timeout=30)
    child.send("\x03")
    child.expect("interrupted")
    child.expect(PROMPT)
    child.sendeof()
    saved_thread(child)


def test_an_interpreter_alone_is_refused_as_a_typed_prefix(
    server: FakeLlmServer, project: Path
) -> None:
    server.add(Turn(tool_calls=[FakeToolCall("shell", {"command": "python3 build.py --fast"})]))
    server.add(Turn(text="all done"))
    child = spawn(["--private"], project, server)
    child.expect(PROMPT)
    child.sendline("build it")
    child.expect(r"\[p\] always, for a prefix you type")
    child.send("p")
    child.expect(r"prefix \(Enter accepts, Esc goes back\)")
    child.send("\x17\x17")  # Ctrl-W twice: `python3` is left
    child.send("\r")
    child.expect(r"`python3` would run any code at all: an interpreter is never granted by its")
    child.expect(r"\[p\] always, for a prefix you type")  # asked again
    child.send("n")
    child.expect("→ deny")
    child.expect("all done")
    child.expect(PROMPT)
    child.sendeof()
    saved_thread(child)


def test_an_unknown_price_is_unknown_on_the_spinner_and_in_cost(
    server: FakeLlmServer, project: Path
) -> None:
    server.add(Turn(text="first", delay=2), Turn(text="second", delay=2))
    child = spawn(["--private", "-m", "openai:my-local-model"], project, server)
    child.expect(PROMPT)
    child.sendline("one")
    child.expect(r"thinking \d+\.\ds · 0 tokens · cost unknown")  # before any price is known
    child.expect("first")
    child.expect(PROMPT)
    # the toolbar shares the spinner's text; it is not drawn in a test pty (no cursor
    # position reports), so /cost stands for it
    child.sendline("/cost")
    child.expect(r"cost unknown \(no price known for a model used\)")
    child.expect(PROMPT)
    child.sendline("two")
    child.expect(r"thinking \d+\.\ds · [\d,.k]+ tokens · cost unknown")
    child.expect("second")
    child.expect(PROMPT)
    child.sendeof()
    saved_thread(child)
    assert child.before is not None
    assert "$0.0" not in child.before


def test_a_refused_connection_and_a_missing_key_are_said_once_without_retry_advice(
    server: FakeLlmServer, project: Path
) -> None:
    from tests.support.loom_cli import loom_in_process
    from tests.support.net import free_port

    env = {
        "OPENAI_BASE_URL": f"http://127.0.0.1:{free_port()}/v1",  # nothing listens there
        "ANTHROPIC_API_KEY": "",  # an OpenAI-only person...
        "LOOM_ARCHITECT_MODEL": "anthropic:claude-opus-4-6",  # ...who set this once
    }
    child = spawn(["-m", "openai:gpt-5"], project, server, env)
    child.expect(PROMPT)
    child.sendline("hello")
    child.expect("connection refused")
    child.expect("No thread is kept until the model answers; fix that and send it again.")
    assert child.before is not None
    assert "Could not connect" not in child.before  # said once
    assert "retry" not in child.before  # no advice that cannot help
    child.expect(PROMPT)
    child.sendline("/architect")
    child.expect(r"architect mode cannot start: anthropic:claude-opus-4-6 \(model\.architect")
    child.expect("No API key for anthropic")
    child.expect(PROMPT)  # still in normal mode, nothing sent
    child.sendeof()
    child.expect(pexpect.EOF)
    assert "Thread saved" not in child.before
    assert loom_in_process(["list", "--json"], project, server).stdout.strip() == "[]"
