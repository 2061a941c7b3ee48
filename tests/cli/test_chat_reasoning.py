"""Reasoning in the REPL (a real pty): folded to one dimmed line by default, whole after
`/thinking`; `/effort` changes what the next call asks for; `--effort` starts it."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.llm_server import FakeLlmServer, Turn
from tests.support.chat_pty import PROMPT, saved_thread, spawn

FIRST = "Weigh the two options.\nOption A is simpler and enough here."


def test_thinking_is_folded_then_shown_and_effort_changes(
    server: FakeLlmServer, project: Path
) -> None:
    server.add(Turn(thinking=FIRST, text="Take option A."))
    server.add(Turn(thinking="A short second thought.", text="Still A."))
    server.add(Turn(text="plain model"))
    child = spawn(["-m", "openai:gpt-5", "--effort", "high"], project, server)
    child.expect(PROMPT)
    child.sendline("A or B?")
    child.expect(
        r"✻ Weigh the two options\.…  \(\d+ words of thinking; Ctrl-O or /thinking shows it\)"
    )
    child.expect("Take option A.")
    child.expect(PROMPT)
    assert child.before is not None
    assert "Option A is simpler" not in child.before  # folded: only its first line
    assert server.requests[-1].json["reasoning"]["effort"] == "high"

    child.sendcontrol("o")  # the key at the prompt unfolds it, as /thinking does
    child.expect("thinking: shown whole as it streams")
    child.expect("Option A is simpler and enough here.")  # the last thinking, whole
    child.sendline("/thinking")
    child.expect("thinking: folded to a line")
    child.sendline("/thinking")
    child.expect("thinking: shown whole as it streams")
    child.sendline("/effort")
    child.expect("effort: high")
    child.sendline("/effort extreme")
    child.expect("must be one of minimal, low, medium, high")
    child.sendline("/effort low")
    child.expect("effort: low")
    child.sendline("and now?")
    child.expect(r"A short.*second.*thought\.")  # streamed whole now, piece by piece
    child.expect("Still A.")
    child.expect(PROMPT)
    assert server.requests[-1].json["reasoning"]["effort"] == "low"

    child.sendline("/cost")
    child.expect(r"out \([\d,]+ of them thinking\)")
    child.sendline("/model openai:gpt-4.1")
    child.expect("model: openai:gpt-4.1")
    child.sendline("/effort high")
    child.expect("does not reason; effort high is ignored")
    child.sendline("plain?")
    child.expect("plain model")
    child.expect(PROMPT)
    assert "reasoning" not in server.requests[-1].json
    child.sendeof()
    thread = saved_thread(child)
    first = thread["conversation"]["messages"][1]
    assert first["reasoning"][0]["text"] == FIRST and first["usage"]["reasoning_tokens"] > 0
