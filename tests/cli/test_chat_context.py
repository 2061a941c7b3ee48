"""`/context` in the REPL (a real pty, the fake LLM server): where the window goes, part by
part, with one suggestion for a part that is large."""

from __future__ import annotations

import re
from pathlib import Path

import pexpect
from tests.fakes.llm_server import FakeLlmServer, Turn
from tests.support.chat_pty import PROMPT, spawn


def test_context_breaks_the_window_down_and_suggests(server: FakeLlmServer, project: Path) -> None:
    (project / ".loom.toml").write_text(
        "[context]\nmax_context_tokens = 12000\nreserved_output_tokens = 1000\n"
        "[repo]\nmap_tokens = 0\n"
    )
    (project / "AGENTS.md").write_text("Run the whole test suite before each commit.\n" * 400)
    server.add(Turn(text="hello there"))
    child = spawn([], project, server)
    child.expect(PROMPT)
    child.sendline("hi")
    child.expect("hello there")
    child.expect(PROMPT)
    child.sendline("/context")
    child.expect(r"Context window of [\w:.-]+: 12,000 tokens")
    child.expect(r"system prompt +[\d,]+ +\d+\.\d%")
    child.expect(r"tools \(Loom's\) +[\d,]+ +\d+\.\d%")
    child.expect(r"project instructions +([\d,]+) +(\d+\.\d)%")
    assert isinstance(child.match, re.Match)
    assert float(child.match.group(2)) > 25
    child.expect(r"messages +([\d,]+) +\d+\.\d%")
    assert isinstance(child.match, re.Match)
    assert int(child.match.group(1).replace(",", "")) > 0
    child.expect(r"reserved for the answer +1,000 +8\.3%")
    child.expect(r"free +[\d,]+ +\d+\.\d%")
    child.expect(r"Suggestion: the project instructions are \d+% of the window")
    child.expect("rules_max_tokens")
    child.expect(PROMPT)
    assert len(server.requests) == 1  # /context called no model
    child.sendeof()
    child.expect(pexpect.EOF)
