"""A file the person names (`calc.py`, `@calc.py`) is raised in the repo map the model gets,
never taken out of it, even after a tool has read it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.loom_cli import loom_in_process


@pytest.fixture
def many_files(project: Path) -> Path:
    # every job is used by the next one, calc.py by nobody: without a mention it ranks last
    (project / "helpers.py").write_text("def helper(x):\n    return x\n")
    for n in range(12):
        (project / f"mod_{n}.py").write_text(
            f"from helpers import helper\n\n\ndef job_{n}():\n    return helper({n})\n"
            f"\n\ndef use_{n}():\n    return job_{(n + 1) % 12}()\n"
        )
    (project / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    return project


def context_blocks(request: object) -> list[str]:
    """The context blocks the model reads in a request, oldest first: each stays in the
    history where it was sent (the repo map changes per call, so it comes after the
    conversation, never in the system text)."""
    body = request.json  # type: ignore[attr-defined]
    assert "# Repository map" not in json.dumps(body["system"])
    texts = [b.get("text", "") for m in body["messages"] for b in m["content"]]
    return [text for text in texts if text.startswith("<loom-context>")]


def repo_map(request: object) -> str:
    """The newest repo map the model sees in a request."""
    maps = [text for text in context_blocks(request) if "# Repository map" in text]
    assert maps, context_blocks(request)
    return maps[-1].split("# Repository map", 1)[1]


def run(project: Path, server: FakeLlmServer, prompt: str) -> None:
    done = loom_in_process(["run", "-p", prompt, "--yes"], project, server, LOOM_MAP_TOKENS="80")
    assert done.returncode == 0, done.stderr


def test_without_a_mention_calc_is_outranked(server: FakeLlmServer, many_files: Path) -> None:
    server.add(Turn(text="ok"))
    run(many_files, server, "tidy up the project")
    assert "calc.py" not in repo_map(server.requests[0])


@pytest.mark.parametrize("mention", ["calc.py", "@calc.py", "@./calc.py"])
def test_a_mentioned_file_ranks_first_and_stays_after_it_is_read(
    server: FakeLlmServer, many_files: Path, mention: str
) -> None:
    server.add(Turn(tool_calls=[FakeToolCall("file_read", {"path": "calc.py"})]))
    server.add(Turn(text="read it"))
    run(many_files, server, f"look at {mention} please")
    first, after_read = (repo_map(r) for r in server.requests[:2])
    assert first.lstrip().startswith("calc.py:"), first
    assert "def add" in first
    assert "calc.py:" in after_read and "def add" in after_read, after_read
