"""Background commands in the REPL (a real pty, the fake LLM server): /shells lists and
kills them, and leaving the REPL (Ctrl-D) ends them."""

from __future__ import annotations

import time
from pathlib import Path

import pexpect
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.chat_pty import PROMPT, spawn
from tests.support.processes import alive as _alive


def test_shells_lists_and_kills_and_ctrl_d_ends_the_rest(
    server: FakeLlmServer, project: Path
) -> None:
    first = FakeToolCall("shell", {"command": "sleep 31341", "background": True})
    second = FakeToolCall("shell", {"command": "sleep 31342", "background": True})
    server.add(Turn(tool_calls=[first, second]), Turn(text="both started"))
    child = spawn(["--yes"], project, server)
    child.expect(PROMPT)
    child.sendline("start two")
    child.expect("both started")
    child.expect(PROMPT)
    child.sendline("/shells")
    child.expect(r"b1 +running +\d+ s +sleep 31341")
    child.expect(r"b2 +running +\d+ s +sleep 31342")
    child.sendline("/shells kill b1")
    child.expect(r"\[b1 killed: sleep 31341\]")
    assert _alive("31341") == [] and _alive("31342")
    child.sendline("/shells kill b9")
    child.expect("no background command 'b9'")
    child.expect(PROMPT)
    server.add(Turn(text="noted"))
    child.sendline("anything new?")  # the model hears that b1 ended, in this message
    child.expect("noted")
    child.expect(PROMPT)
    told = str(server.requests[-1].json["messages"][-1]["content"])
    assert "[background commands that ended]" in told and "[b1 killed: sleep 31341]" in told
    assert "b2" not in told
    child.sendeof()
    child.expect(pexpect.EOF)
    deadline = time.monotonic() + 10
    while _alive("31342") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _alive("31342") == []
