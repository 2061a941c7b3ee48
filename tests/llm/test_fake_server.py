"""The fake LLM server itself: non-streaming replies through the SDKs, recording,
script exhaustion, and the subprocess mode the end-to-end tests use."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn

REPO = Path(__file__).resolve().parents[2]


def test_non_streaming_replies_parse_in_each_sdk(server: FakeLlmServer) -> None:
    import anthropic
    import openai
    from google import genai
    from google.genai import types

    call = FakeToolCall("file_read", {"path": "a.py"}, id="c1")
    server.add(
        Turn(text="hi", tool_calls=[call]),
        Turn(text="hi", tool_calls=[call]),
        Turn(text="hi", tool_calls=[call]),
    )
    message = anthropic.Anthropic(api_key="k", base_url=server.base_url).messages.create(
        model="m", max_tokens=10, messages=[{"role": "user", "content": "x"}]
    )
    used = message.content[1]
    assert isinstance(used, anthropic.types.ToolUseBlock)
    assert used.input == {"path": "a.py"} and message.stop_reason == "tool_use"
    client = openai.OpenAI(api_key="k", base_url=server.openai_base_url)
    completion = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "x"}]
    )
    tool_calls = completion.choices[0].message.tool_calls
    assert tool_calls is not None and tool_calls[0].type == "function"
    assert tool_calls[0].function.arguments == '{"path": "a.py"}'
    gemini = genai.Client(api_key="k", http_options=types.HttpOptions(base_url=server.base_url))
    response = gemini.models.generate_content(model="m", contents="x")
    assert response.function_calls is not None
    assert response.function_calls[0].args == {"path": "a.py"} and response.text == "hi"
    assert [r.stream for r in server.requests] == [False, False, False]
    assert [r.format for r in server.requests] == ["anthropic", "openai", "google"]


def test_exhausted_script_is_a_clear_400_unless_a_default_is_set() -> None:
    with FakeLlmServer([Turn(text="one")]) as fake:
        body = {"model": "m", "messages": [], "max_tokens": 5}
        assert httpx.post(f"{fake.base_url}/v1/messages", json=body).status_code == 200
        second = httpx.post(f"{fake.base_url}/v1/messages", json=body)
        assert second.status_code == 400 and "script exhausted after 1" in second.text
        assert len(fake.requests) == 2  # failed requests are recorded too
    with FakeLlmServer(default=Turn(text="again")) as fake:
        for _ in range(2):
            reply = httpx.post(f"{fake.openai_base_url}/chat/completions", json=body)
            assert reply.json()["choices"][0]["message"]["content"] == "again"


def test_subprocess_mode_scripts_records_and_serves_control_endpoints(tmp_path: Path) -> None:
    script = tmp_path / "turns.json"
    script.write_text(
        json.dumps(
            {
                "turns": [
                    {"text": "first"},
                    {"tool_calls": [{"name": "shell", "arguments": {"command": "ls"}}]},
                    {"error": {"status": 429, "message": "later", "retry_after": 2}},
                ]
            }
        )
    )
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
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("LISTENING http://127.0.0.1:")
        base = line.split()[1]
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        first = httpx.post(f"{base}/v1/chat/completions", json=body).json()
        assert first["choices"][0]["message"]["content"] == "first"
        second = httpx.post(f"{base}/v1/messages", json=body).json()
        assert second["content"][0]["name"] == "shell"
        httpx.post(f"{base}/_fake/turns", json=[{"text": "appended"}])
        third = httpx.post(f"{base}/v1/messages", json=body)
        assert third.status_code == 429 and third.headers["retry-after"] == "2"
        fourth = httpx.post(f"{base}/v1beta/models/g:generateContent", json={"contents": []})
        assert fourth.json()["candidates"][0]["content"]["parts"][0]["text"] == "appended"
        recorded = httpx.get(f"{base}/_fake/requests").json()
        assert [r["path"] for r in recorded] == [
            "/v1/chat/completions",
            "/v1/messages",
            "/v1/messages",
            "/v1beta/models/g:generateContent",
        ]
        lines = [json.loads(x) for x in record.read_text().splitlines()]
        assert [r["json"] for r in lines[:1]] == [body]
        assert len(lines) == 4
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0


@pytest.mark.parametrize("path", ["/v2/unknown", "/v1/embeddings"])
def test_unknown_paths_are_404_and_recorded(server: FakeLlmServer, path: str) -> None:
    assert httpx.post(f"{server.base_url}{path}", json={}).status_code == 404
    assert server.requests[0].format == "unknown"
