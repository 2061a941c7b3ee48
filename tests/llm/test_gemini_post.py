"""Gemini requests reuse the URL and headers the SDK built once per model
(`loom.llm._gemini_post`), and fail exactly as the SDK's own request layer fails."""

from __future__ import annotations

from typing import Any

import pytest

from loom.core.messages import UserMessage
from loom.llm.base import LlmError, LlmRequest, collect
from tests.fakes.llm_server import FakeLlmServer, Turn
from tests.support.providers import (
    FAILING_TURNS,
    assert_same_failure,
    count_calls,
    failure_timeout,
    provider_for,
)

REQUEST = LlmRequest(model="test-model", messages=[UserMessage(content="hi")])


def _sdk_path(server: FakeLlmServer, **kwargs: Any) -> Any:
    """A Google provider that goes through the SDK's `_async_request` on every call."""
    provider = provider_for("google", server, **kwargs)
    provider._post._direct = False
    return provider


async def test_the_sdk_builds_the_request_once_per_model(
    server: FakeLlmServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = provider_for("google", server)
    builds = count_calls(monkeypatch, provider._client._api_client, "_build_request")
    for n in range(4):
        server.add(Turn(text=f"answer {n}"))
        assert (await collect(provider.stream(REQUEST))).content == f"answer {n}"
    other = LlmRequest(model="other-model", messages=REQUEST.messages)
    server.add(Turn(text="other"))
    assert (await collect(provider.stream(other))).content == "other"
    assert builds[0] == 2 and provider._post.templates_built == 2  # one per model
    first, *later = server.requests[:4]
    for request in later:  # the same headers (the key included) and body on the wire
        assert request.path == first.path and request.json == first.json
        assert request.headers == first.headers
    assert "other-model" in server.requests[4].path


async def test_the_wire_request_is_the_sdks_own(server: FakeLlmServer) -> None:
    server.add(Turn(text="a"), Turn(text="b"))
    await collect(_sdk_path(server).stream(REQUEST))
    await collect(provider_for("google", server).stream(REQUEST))
    through_sdk, direct = server.requests
    assert direct.path == through_sdk.path and direct.json == through_sdk.json
    assert direct.headers == through_sdk.headers


GEMINI_FAILURES = {
    **FAILING_TURNS,
    "sse-garbage": Turn(garbage="<html><body>502 Bad Gateway</body></html>"),
    "wrong-json": Turn(garbage='{"unexpected": "shape"}', content_type="application/json"),
    "error-event": Turn(garbage='data: {"error": {"code": 503, "message": "busy"}}\n\n'),
    "raw-error": Turn(garbage='{"error": {"code": 429, "message": "quota"}}'),
    "bad-json": Turn(garbage="data: {not json\n\n"),
}


@pytest.mark.parametrize("turn", GEMINI_FAILURES.values(), ids=GEMINI_FAILURES.keys())
async def test_a_call_fails_as_the_sdk_path_fails(turn: Turn, server: FakeLlmServer) -> None:
    timeout = failure_timeout(turn)
    server.add(turn)
    with pytest.raises(LlmError) as through_sdk:
        await collect(_sdk_path(server, timeout=timeout).stream(REQUEST))
    direct = provider_for("google", server, timeout=timeout)
    server.add(turn)
    with pytest.raises(LlmError) as caught:
        await collect(direct.stream(REQUEST))
    assert direct._post.templates_built == 1
    assert_same_failure(caught.value, through_sdk.value)
