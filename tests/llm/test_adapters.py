"""Each adapter through its real SDK against the wire-level fake server."""

from __future__ import annotations

import pytest

from loom.core.messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from loom.llm.base import (
    RAW_ARGUMENTS_KEY,
    LlmRequest,
    StreamEnd,
    TextDelta,
    ToolSpec,
    UsageReport,
    collect,
    invalid_arguments_text,
)
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.providers import PROVIDERS, provider_for

READ_SPEC = ToolSpec(
    "file_read",
    "Read a file.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


def request(*messages: Message, tools: tuple[ToolSpec, ...] = (READ_SPEC,)) -> LlmRequest:
    history = list(messages) or [UserMessage(content="hello")]
    return LlmRequest(model="test-model", messages=history, system="You are Loom.", tools=tools)


@pytest.mark.parametrize("name", PROVIDERS)
async def test_streams_text_in_chunks_with_usage_and_stop_reason(
    name: str, server: FakeLlmServer
) -> None:
    server.add(Turn(text=["Hel", "lo, ", "world."], input_tokens=42, output_tokens=7))
    events = [event async for event in provider_for(name, server).stream(request())]
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert deltas == ["Hel", "lo, ", "world."]
    usage = next(e.usage for e in events if isinstance(e, UsageReport))
    assert (usage.input_tokens, usage.output_tokens) == (42, 7)
    assert isinstance(events[-1], StreamEnd) and events[-1].stop_reason == "end_turn"


@pytest.mark.parametrize("name", PROVIDERS)
async def test_tool_calls_are_assembled_from_fragments(name: str, server: FakeLlmServer) -> None:
    arguments = {"path": "src/app.py", "lines": [1, 2, 3], "note": 'ünïcode "quoted"'}
    server.add(
        Turn(
            text="Let me look.",
            tool_calls=[
                FakeToolCall("file_read", arguments, id="call_a"),
                FakeToolCall("shell", {"command": "ls -la"}, id="call_b"),
            ],
        )
    )
    response = await collect(provider_for(name, server).stream(request()))
    assert response.content == "Let me look."
    assert [(c.id, c.tool_name, c.arguments_json) for c in response.tool_calls] == [
        ("call_a", "file_read", arguments),
        ("call_b", "shell", {"command": "ls -la"}),
    ]
    assert response.stop_reason == "tool_use"


@pytest.mark.parametrize("name", ["anthropic", "openai", "openai-compatible"])
async def test_invalid_json_arguments_keep_the_raw_text(name: str, server: FakeLlmServer) -> None:
    server.add(
        Turn(
            tool_calls=[
                FakeToolCall("file_read", '{"path": "a.py",', id="c1"),
                FakeToolCall("file_read", '["a.py"]', id="c2"),
            ]
        )
    )
    response = await collect(provider_for(name, server).stream(request()))
    assert [invalid_arguments_text(c) for c in response.tool_calls] == [
        '{"path": "a.py",',
        '["a.py"]',
    ]
    assert set(response.tool_calls[0].arguments_json) == {RAW_ARGUMENTS_KEY}


@pytest.mark.parametrize("name", PROVIDERS)
async def test_gemini_calls_without_ids_get_unique_ids(name: str, server: FakeLlmServer) -> None:
    server.add(
        Turn(
            tool_calls=[
                FakeToolCall("file_read", {"path": "a"}),
                FakeToolCall("file_read", {"path": "b"}),
            ]
        )
    )
    response = await collect(provider_for(name, server).stream(request()))
    ids = [call.id for call in response.tool_calls]
    assert len(set(ids)) == 2 and all(ids)


HISTORY = (
    UserMessage(content="Fix the bug"),
    AssistantMessage(
        content="Reading two files.",
        tool_calls=[
            ToolCall(id="c1", tool_name="file_read", arguments_json={"path": "a.py"}),
            ToolCall(id="c2", tool_name="file_read", arguments_json={"path": "b.py"}),
        ],
    ),
    ToolMessage(tool_call_id="c2", tool_name="file_read", content="B", is_error=True),
    ToolMessage(tool_call_id="c1", tool_name="file_read", content="A"),
    UserMessage(content="and hurry"),
)


async def _send_history(name: str, server: FakeLlmServer, **options: object) -> dict:
    server.add(Turn(text="done"))
    await collect(provider_for(name, server, **options).stream(request(*HISTORY)))
    [recorded] = server.requests
    return recorded.json


async def test_anthropic_wire_pairs_results_with_calls(server: FakeLlmServer) -> None:
    body = await _send_history("anthropic", server)
    marker = {"type": "ephemeral"}  # prompt-cache breakpoints: see tests/llm/test_caching.py
    assert body["system"] == [{"type": "text", "text": "You are Loom.", "cache_control": marker}]
    assert body["tools"][0]["input_schema"] == READ_SPEC.parameters
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "user"]
    assistant = body["messages"][1]["content"]
    assert [b["type"] for b in assistant] == ["text", "tool_use", "tool_use"]
    results = body["messages"][2]["content"]
    # results in call order, right after the calls, then the user's new text
    assert [(b["type"], b.get("tool_use_id")) for b in results] == [
        ("tool_result", "c1"),
        ("tool_result", "c2"),
        ("text", None),
    ]
    assert results[1]["is_error"] is True and "is_error" not in results[0]
    assert [b.get("cache_control") for b in results] == [None, marker, marker]


@pytest.mark.parametrize("name", ["openai", "openai-compatible"])
async def test_openai_wire_pairs_results_with_calls(name: str, server: FakeLlmServer) -> None:
    body = await _send_history(name, server, api="chat")  # Chat Completions' wire
    messages = body["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert [m["tool_call_id"] for m in messages[3:5]] == ["c1", "c2"]
    assert messages[2]["tool_calls"][0]["function"] == {
        "name": "file_read",
        "arguments": '{"path": "a.py"}',
    }
    assert body["tools"][0]["function"]["parameters"] == READ_SPEC.parameters
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    limit_field = "max_completion_tokens" if name == "openai" else "max_tokens"
    assert body[limit_field] == 8192


async def test_gemini_wire_pairs_results_with_calls(server: FakeLlmServer) -> None:
    body = await _send_history("google", server)
    [recorded] = server.requests
    assert recorded.path.endswith("/models/test-model:streamGenerateContent")
    assert recorded.query.get("alt") == ["sse"]
    assert body["systemInstruction"]["parts"][0]["text"] == "You are Loom."
    contents = body["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    calls = [p["functionCall"]["id"] for p in contents[1]["parts"] if "functionCall" in p]
    responses = [p["functionResponse"] for p in contents[2]["parts"] if "functionResponse" in p]
    assert calls == ["c1", "c2"] and [r["id"] for r in responses] == ["c1", "c2"]
    assert responses[1]["response"] == {"error": "B"}
    assert contents[2]["parts"][-1] == {"text": "and hurry"}
    declaration = body["tools"][0]["functionDeclarations"][0]
    assert declaration["name"] == "file_read"


@pytest.mark.parametrize("name", PROVIDERS)
async def test_interrupted_call_gets_a_placeholder_result(name: str, server: FakeLlmServer) -> None:
    server.add(Turn(text="ok"))
    history = (
        UserMessage(content="go"),
        AssistantMessage(content="", tool_calls=[ToolCall(id="c9", tool_name="shell")]),
        UserMessage(content="I pressed Ctrl-C, carry on"),
    )
    await collect(provider_for(name, server).stream(request(*history)))
    text = str(server.requests[0].json)
    assert "interrupted" in text and "c9" in text


async def test_gemini_thought_signatures_survive_the_thread_and_go_back(
    server: FakeLlmServer,
) -> None:
    from loom.core.messages import AssistantMessage as Assistant

    signature = "c2lnbmF0dXJlLWJ5dGVz"  # base64 of b"signature-bytes"
    server.add(
        Turn(
            tool_calls=[
                FakeToolCall("file_read", {"path": "a"}, id="g1", thought_signature=signature)
            ]
        ),
        Turn(text="done"),
    )
    provider = provider_for("google", server)
    response = await collect(provider.stream(request()))
    [call] = response.tool_calls
    # The signature is an extra field on the call: it is written to the thread file...
    saved = Assistant(tool_calls=[call]).model_dump(mode="json")
    restored = Assistant.model_validate(saved).tool_calls[0]
    assert saved["tool_calls"][0]["thought_signature"] == signature
    # ...and sent back with the history on the next request.
    history = (
        UserMessage(content="go"),
        Assistant(tool_calls=[restored]),
        ToolMessage(tool_call_id="g1", tool_name="file_read", content="A"),
    )
    await collect(provider.stream(request(*history)))
    part = server.requests[1].json["contents"][1]["parts"][0]
    assert part["thoughtSignature"] == signature


@pytest.mark.parametrize("name", PROVIDERS)
async def test_stopping_early_closes_the_stream_cleanly(name: str, server: FakeLlmServer) -> None:
    import asyncio

    server.add(Turn(text=[f"word{i} " for i in range(300)]))
    loop = asyncio.get_running_loop()
    problems: list[str] = []
    loop.set_exception_handler(lambda _loop, context: problems.append(context["message"]))
    stream = provider_for(name, server).stream(request())
    async for event in stream:
        assert isinstance(event, TextDelta)
        break  # e.g. the user pressed Ctrl-C
    await stream.aclose()
    await loop.shutdown_asyncgens()  # what asyncio.run does at exit
    assert problems == []
