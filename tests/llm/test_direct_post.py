"""The SDK builds a provider's request once; later calls send new bodies with it
(`loom.llm._direct`), and fail exactly as the SDK's own path fails."""

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

DIRECT = ["anthropic", "openai", "openai-compatible"]
REQUEST = LlmRequest(model="test-model", messages=[UserMessage(content="hi")])


@pytest.mark.parametrize("name", DIRECT)
async def test_the_sdk_builds_the_request_once_per_provider(
    name: str, server: FakeLlmServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = provider_for(name, server)
    built = count_calls(monkeypatch, provider._client, "_build_request")
    for n in range(5):
        server.add(Turn(text=f"answer {n}"))
        response = await collect(provider.stream(REQUEST))
        assert response.content == f"answer {n}"
    # the first call's own request, then the template; before: one per call (5)
    assert built[0] == 2
    assert provider._post.templates_built == 1
    first, *later = server.requests
    for request in later:  # the same headers (auth included) and body on the wire
        assert request.path == first.path and request.json == first.json
        assert request.headers == first.headers


async def _error(provider: Any, server: FakeLlmServer, turn: Turn) -> LlmError:
    server.add(turn)
    with pytest.raises(LlmError) as caught:
        await collect(provider.stream(REQUEST))
    return caught.value


@pytest.mark.parametrize("name", DIRECT)
@pytest.mark.parametrize("turn", FAILING_TURNS.values(), ids=FAILING_TURNS.keys())
async def test_a_later_call_fails_as_the_sdk_path_fails(
    name: str, turn: Turn, server: FakeLlmServer
) -> None:
    timeout = failure_timeout(turn)
    fresh = provider_for(name, server, timeout=timeout)
    first = await _error(fresh, server, turn)  # through the SDK's post
    warm = provider_for(name, server, timeout=timeout)
    server.add(Turn(text="fine"))
    await collect(warm.stream(REQUEST))
    assert warm._post.templates_built == 1
    later = await _error(warm, server, turn)  # through the prebuilt request
    assert_same_failure(later, first)


async def test_anthropic_events_are_read_without_the_sdk_decoder(
    server: FakeLlmServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = provider_for("anthropic", server)
    decoders = count_calls(monkeypatch, provider._client, "_make_sse_decoder")
    for n in range(3):
        server.add(Turn(text=["a", "b", f"{n}"]))
        assert (await collect(provider.stream(REQUEST))).content == f"ab{n}"
    # only the first call's SDK stream object builds one (never read); before: one per call
    assert decoders[0] == 1


@pytest.mark.parametrize("name", DIRECT)
async def test_an_sdk_whose_private_steps_differ_keeps_its_own_post(
    name: str, server: FakeLlmServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = provider_for(name, server)

    async def renamed(*args: Any, **kwargs: Any) -> Any:
        raise AttributeError("_prepare_options")  # as a later SDK version might

    monkeypatch.setattr(provider._post, "_build_template", renamed)
    for n in range(3):
        server.add(Turn(text=f"answer {n}"))
        assert (await collect(provider.stream(REQUEST))).content == f"answer {n}"
    assert provider._post.templates_built == 0
