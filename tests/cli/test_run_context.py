"""Where the context window goes, in `loom run`'s machine output: the init line of
stream-json and the result of `-o json` carry the same breakdown `/context` shows."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.llm_server import FakeLlmServer, Turn
from tests.support.loom_cli import loom

CONFIG = "[context]\nmax_context_tokens = 30000\nreserved_output_tokens = 2000\n"


def _check(context: dict) -> dict[str, int]:
    parts = {part["key"]: part["tokens"] for part in context["parts"]}
    assert context["window"] == 30_000 and sum(parts.values()) == 30_000
    assert parts["reserved"] == 2_000 and parts["instructions"] > 0 and parts["system"] > 0
    assert list(parts)[-1] == "free" and parts["free"] > 0
    return parts


def test_stream_json_init_and_json_result_carry_the_context(
    server: FakeLlmServer, project: Path
) -> None:
    (project / ".loom.toml").write_text(CONFIG)
    (project / "AGENTS.md").write_text("Use tabs.\n")
    server.add(Turn(text="done"))
    done = loom(["run", "-p", "hi", "-o", "stream-json"], project, server)
    assert done.returncode == 0, done.stderr
    init = json.loads(done.stdout.splitlines()[0])
    assert init["subtype"] == "init"
    parts = _check(init["context"])
    assert init["context"]["suggestion"] is None  # nothing is large in a 30k window

    server.add(Turn(text="done again"))
    done = loom(["run", "-p", "hi", "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["result"] == "done again"
    again = _check(result["context"])
    assert again["instructions"] == parts["instructions"] and again["tools"] == parts["tools"]
