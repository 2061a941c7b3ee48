"""The sandbox in tests: skip (or fail, in CI) where this machine has none, and the
folders a sandboxed run is checked against."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.loom_cli import loom_in_process


def require_sandbox() -> None:
    """Skip where this machine has no sandbox, except in CI, where that is a failure."""
    from loom.sandbox import detect

    detection = detect()
    if detection.backend is None:
        if os.environ.get("CI"):
            pytest.fail(f"no sandbox in CI: {detection.problem}")
        pytest.skip(f"no sandbox here: {detection.problem}")


@dataclass
class Layout:
    project: Path
    outside: Path  # not writable in the sandbox
    systmp: Path  # the loom process's TMPDIR, so the writable system temp
    loom_home: Path


def run_command(
    server: FakeLlmServer, layout: Layout, command: str, *flags: str, **env: str
) -> dict[str, Any]:
    """Script one shell call, run `loom run --yes`, return the tool result the model got."""
    server.add(Turn(tool_calls=[FakeToolCall("shell", {"command": command})]))
    server.add(Turn(text="done"))
    done = loom_in_process(
        ["run", "-p", "do it", "--yes", *flags],
        layout.project,
        server,
        TMPDIR=str(layout.systmp),
        **env,
    )
    assert done.returncode == 0, done.stderr
    return last_tool_result(server)


def last_tool_result(server: FakeLlmServer) -> dict[str, Any]:
    for request in reversed(server.requests):
        for message in reversed(request.json.get("messages", [])):
            content = message.get("content")
            if isinstance(content, list):
                for block in content:
                    if block.get("type") == "tool_result":
                        return block
    raise AssertionError("the model never got a tool result")
