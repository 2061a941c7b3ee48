"""The OpenAI adapters read server-sent events straight from the response bytes
(`loom.llm._sse`): every way a read can split a line, and the SDK's decoder unused."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from loom.core.messages import UserMessage
from loom.llm._sse import drain, sse_events
from loom.llm.base import LlmRequest, collect
from tests.fakes.llm_server import FakeLlmServer, Turn
from tests.support.providers import provider_for

STREAM = (
    b": keep-alive\r\n"
    b'data: {"a": 1}\r\n\r\n'
    b"event: note\ndata: first\ndata:second\n\n"
    b"data: cr only\r\r"
    b"data: [DONE]\n\n"
)
EVENTS = [(b"", b'{"a": 1}'), (b"note", b"first\nsecond"), (b"", b"cr only"), (b"", b"[DONE]")]


async def reads(data: bytes, size: int) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64, 10_000])
async def test_events_are_the_same_however_the_reads_split_them(size: int) -> None:
    assert [event async for event in sse_events(reads(STREAM, size))] == EVENTS


async def test_a_last_event_without_its_blank_line_still_counts() -> None:
    got = [event async for event in sse_events(reads(b"data: 1\n\ndata: 2", 3))]
    assert got == [(b"", b"1"), (b"", b"2")]


@pytest.mark.parametrize("size", [1, 5, 10_000])
async def test_lines_outside_sse_are_kept_when_asked(size: int) -> None:
    # Gemini's API may answer with plain JSON lines (an error) in an SSE stream
    stream = b'id: 7\nretry: 10\n{"error": {\n  "code": 429}\ndata: x\n\n}'
    others: list[bytes] = []
    got = [event async for event in sse_events(reads(stream, size), others)]
    assert got == [(b"", b"x")]
    assert others == [b'{"error": {', b'  "code": 429}', b"}"]


async def test_drain_reads_the_rest_of_the_body() -> None:
    body = reads(STREAM, 5)
    await drain(body)
    assert [piece async for piece in body] == []


async def test_an_openai_stream_does_not_go_through_the_sdk_decoder(
    server: FakeLlmServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from openai import _streaming

    decoded = []
    original = _streaming.SSEDecoder.decode

    def counting(self: object, line: str) -> object:
        decoded.append(line)
        return original(self, line)  # type: ignore[arg-type]

    monkeypatch.setattr(_streaming.SSEDecoder, "decode", counting)
    server.add(Turn(text=[f"w{i} " for i in range(300)]))
    provider = provider_for("openai", server)
    request = LlmRequest(model="test-model", messages=[UserMessage(content="hi")])
    response = await collect(provider.stream(request))
    assert response.content == "".join(f"w{i} " for i in range(300))
    assert decoded == []  # the SDK's decoder: two calls per chunk
