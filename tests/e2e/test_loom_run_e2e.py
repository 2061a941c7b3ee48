"""End to end: `loom run` and the fake LLM server, both real subprocesses on loopback.

The scripted model reads a file, edits it, runs a command, then answers. We check the
file on disk, the thread file (every message, in order, with git state), the requests
the server received (each tool result went back to the model), and that stream-json
printed a line for every message and tool event.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = [
    {
        "text": "Let me look.",
        "tool_calls": [{"name": "file_read", "arguments": {"path": "app.py"}}],
    },
    {
        "tool_calls": [
            {
                "name": "file_edit",
                "arguments": {"path": "app.py", "old_string": "'helo'", "new_string": "'hello'"},
            }
        ]
    },
    {
        "tool_calls": [
            {
                "name": "shell",
                "arguments": {"command": "python3 -c 'import app; print(app.greet())'"},
            }
        ]
    },
    {"text": ["Fixed the typo: ", "greet() now returns hello."]},
]


@pytest.fixture
def fake_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    record = tmp_path / "requests.jsonl"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.fakes.llm_server",
            "--port",
            "0",
            "--script",
            str(script),
            "--record",
            str(record),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline() if process.stdout else ""
        assert line.startswith("LISTENING "), line
        yield line.split()[1], record
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "app.py").write_text("def greet():\n    return 'helo'\n")
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    return root


def test_read_edit_run_through_loom_run(fake_server: tuple[str, Path], project: Path) -> None:
    base_url, record = fake_server
    env = {**os.environ, "OPENAI_COMPATIBLE_BASE_URL": f"{base_url}/v1"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "loom",
            "run",
            "--yes",
            "--output-format",
            "stream-json",
            "--include-partial-messages",
            "--model",
            "openai-compatible:qwen2.5-coder",
            "-p",
            "Fix the typo in greet()",
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr

    # the work happened on disk
    assert (project / "app.py").read_text() == "def greet():\n    return 'hello'\n"

    # stream-json: init first, result last, a line for every message and tool event
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    init, result = lines[0], lines[-1]
    assert (init["type"], init["subtype"]) == ("system", "init")
    assert {"file_read", "file_edit", "shell"} <= set(init["tools"])
    assert init["model"] == "openai-compatible:qwen2.5-coder" and init["cwd"] == str(project)
    assert result["type"] == "result" and result["subtype"] == "success"
    assert result["result"] == "Fixed the typo: greet() now returns hello."
    assert result["num_turns"] == 4 and result["is_error"] is False
    session_id = init["session_id"]
    assert all(line["session_id"] == session_id for line in lines)
    uses = [
        block
        for line in lines
        if line["type"] == "assistant"
        for block in line["message"]["content"]
        if block["type"] == "tool_use"
    ]
    assert [u["name"] for u in uses] == ["file_read", "file_edit", "shell"]
    results = [
        block
        for line in lines
        if line["type"] == "user"
        for block in line["message"]["content"]
        if block["type"] == "tool_result"
    ]
    assert [r["tool_use_id"] for r in results] == [u["id"] for u in uses]
    assert "hello\n[exit code 0]" in results[2]["content"]
    assert all(r["is_error"] is False for r in results)
    kinds = [line["type"] for line in lines]
    assert kinds.count("loom.tool_executing") == 3 and kinds.count("loom.tool_complete") == 3
    assert "stream_event" in kinds  # text deltas, as they streamed

    # the thread file holds every message, in order, and the git state
    thread_file = Path(os.environ["LOOM_HOME"]) / "data" / "threads" / f"{result['thread_id']}.json"
    thread = json.loads(thread_file.read_text())
    messages = thread["conversation"]["messages"]
    assert [m["role"] for m in messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    assert messages[0]["content"] == "Fix the typo in greet()"
    assert [m["tool_call_id"] for m in messages if m["role"] == "tool"] == [u["id"] for u in uses]
    assert messages[-1]["content"] == result["result"]
    assert thread["provider"] == "openai-compatible" and thread["model"] == "qwen2.5-coder"
    assert thread["git_branch"] == "main" and thread["git_end_dirty"] is True
    assert thread["agent_state"]["kind"] == "WaitingForUserInput"

    # the model saw each tool result: four requests, the last carrying all three
    requests = [json.loads(line) for line in record.read_text().splitlines()]
    chat = [r for r in requests if r["format"] == "openai"]
    assert len(chat) == 4 and all(r["json"]["model"] == "qwen2.5-coder" for r in chat)
    last = chat[-1]["json"]["messages"]
    assert [m["role"] for m in last if m["role"] == "tool"] == ["tool"] * 3
    assert any("return 'helo'" in (m.get("content") or "") for m in last)
