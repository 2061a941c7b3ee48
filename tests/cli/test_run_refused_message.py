"""A message refused before anything was sent (`@missing.txt`, an image for a model that
takes none) keeps no thread: `loom run` names none to resume, and `-o json` reports no
thread id, for the thread that `show` and `resume` would not find."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.fakes.llm_server import FakeLlmServer
from tests.support.images import png
from tests.support.loom_cli import Done


@pytest.mark.parametrize(
    ("prompt", "model", "said"),
    [
        ("look at @missing.txt", None, "@missing.txt: no such file or folder"),
        ("see @shot.png", "openai-compatible:qwen2.5-coder", "does not take images"),
    ],
)
def test_a_refused_message_names_no_thread_to_resume(
    cli: Callable[..., Done],
    server: FakeLlmServer,
    project: Path,
    prompt: str,
    model: str | None,
    said: str,
) -> None:
    (project / "shot.png").write_bytes(png())
    env = {"OPENAI_COMPATIBLE_BASE_URL": server.openai_base_url, "OPENAI_COMPATIBLE_API_KEY": "k"}
    args = ["run", "-p", prompt, "-o", "json", *(["--model", model] if model else [])]
    done = cli(args, project, server, **env)
    assert done.returncode == 1 and said in done.stderr
    assert "loom resume" not in done.stderr and "saved" not in done.stderr
    result = json.loads(done.stdout)
    assert result["is_error"] is True and result["thread_id"] is None
    threads = Path(os.environ["LOOM_HOME"]) / "data" / "threads"
    assert not threads.is_dir() or not list(threads.glob("*.json"))
    assert server.requests == []
