"""Hostile text for the terminal tests (issue 34): escape sequences a terminal would act
on, and a script of model turns that carries them into every place the REPL prints."""

from __future__ import annotations

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn

OSC52 = "\x1b]52;c;cm0gLXJmIH4=\x07"
HOSTILE = (
    OSC52
    + "\x1b[2J\x1b[1A\x1b[2K"
    + "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\"
    + "\x1b]0;pwned\x07"
    + "\u202e"
    + "\x9b2J"
)
RAW = ("\x1b", "\x07", "\x9b", "\u202e")
SHOWN = "\\x1b]52;c;cm0gLXJmIH4="  # how OSC 52 looks once shown as text


def assert_text_only(output: str, *, shown: bool = True) -> None:
    leaked = [ch for ch in RAW if ch in output]
    assert not leaked, f"raw {leaked!r} reached the terminal:\n{output!r}"
    if shown:
        assert SHOWN in output, output


def script_hostile_turns(server: FakeLlmServer, answer: str | list[str]) -> None:
    """A shell command printing HOSTILE, a todo item, a sub-agent's description and
    answer holding it, then `answer` (streamed in pieces when a list)."""
    printf = "printf '" + HOSTILE.replace("\x1b", "\\033").replace("\x07", "\\007") + "'"
    todos = [{"content": f"step {HOSTILE}", "status": "in_progress"}]
    task = {"description": f"look {HOSTILE}", "prompt": "child brief"}
    server.add(
        Turn(tool_calls=[FakeToolCall("shell", {"command": printf})]),
        Turn(tool_calls=[FakeToolCall("todo_write", {"todos": todos})]),
        Turn(tool_calls=[FakeToolCall("task", task)]),
        Turn(text=answer),
    )
    server.for_first_message("child brief", Turn(text=f"child says {HOSTILE}"))
