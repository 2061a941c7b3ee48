"""Failures through each real SDK: statuses, garbage, dead endpoints, the guard."""

from __future__ import annotations

import pytest

from loom.core.messages import UserMessage
from loom.llm.base import LlmError, LlmRequest, collect
from loom.llm.guard import ModelRequestBlocked
from loom.llm.registry import create_provider
from loom.llm.retry import RetryPolicy
from tests.fakes.llm_server import FakeLlmServer, Turn
from tests.support.net import free_port
from tests.support.providers import PROVIDERS, provider_for

REQUEST = LlmRequest(model="test-model", messages=[UserMessage(content="hi")])


async def _fail(name: str, server: FakeLlmServer, turn: Turn) -> LlmError:
    server.add(turn)
    with pytest.raises(LlmError) as caught:
        await collect(provider_for(name, server).stream(REQUEST))
    assert caught.value.provider == name
    return caught.value


@pytest.mark.parametrize("name", PROVIDERS)
async def test_rate_limit_is_transient_and_carries_retry_after(
    name: str, server: FakeLlmServer
) -> None:
    error = await _fail(
        name, server, Turn(status=429, retry_after=7, error_message="slow down please")
    )
    assert error.transient and error.status == 429 and error.retry_after == 7.0
    assert "slow down please" in str(error) and "429" in str(error)
    assert RetryPolicy().delay(1, error) == 7.0
    assert len(server.requests) == 1  # the SDK did not retry on its own


@pytest.mark.parametrize("name", PROVIDERS)
@pytest.mark.parametrize("status", [500, 503, 529])
async def test_server_errors_are_transient(name: str, status: int, server: FakeLlmServer) -> None:
    error = await _fail(name, server, Turn(status=status))
    assert error.transient and error.status == status
    assert len(server.requests) == 1


@pytest.mark.parametrize("name", PROVIDERS)
@pytest.mark.parametrize(
    ("status", "hint"), [(401, "API key"), (404, "model id"), (400, "400"), (403, "access")]
)
async def test_client_errors_are_permanent_with_a_hint(
    name: str, status: int, hint: str, server: FakeLlmServer
) -> None:
    error = await _fail(name, server, Turn(status=status, error_message="nope"))
    assert not error.transient and error.status == status
    assert hint in str(error) and "nope" in str(error)


@pytest.mark.parametrize("name", PROVIDERS)
@pytest.mark.parametrize(
    "turn",
    [
        Turn(garbage="<html><body>502 Bad Gateway</body></html>"),
        Turn(garbage="<html>login page</html>", content_type="text/html"),
        Turn(garbage='{"unexpected": "shape"}', content_type="application/json"),
    ],
    ids=["sse-garbage", "html-page", "wrong-json"],
)
async def test_garbage_body_is_a_clear_error(name: str, turn: Turn, server: FakeLlmServer) -> None:
    error = await _fail(name, server, turn)
    assert not error.transient
    assert name in str(error) and ("could not read" in str(error) or "malformed" in str(error))
    assert "base URL" in str(error)


@pytest.mark.parametrize("name", PROVIDERS)
async def test_a_refused_connection_fails_at_once_and_says_where(name: str) -> None:
    port = free_port()  # nothing listens there: trying again will not help
    suffix = "/v1" if name.startswith("openai") else ""
    provider = create_provider(name, api_key="k", base_url=f"http://127.0.0.1:{port}{suffix}")
    with pytest.raises(LlmError) as caught:
        await collect(provider.stream(REQUEST))
    assert not caught.value.transient
    said = str(caught.value)
    assert "Could not connect" in said and str(port) in said and "connection refused" in said
    assert "\n" not in said


def test_an_unknown_host_fails_at_once() -> None:
    import socket

    from loom.llm._errors import map_sdk_error

    class ConnectError(Exception):  # the SDKs' own, by name (see _CONNECTION_NAMES)
        pass

    try:
        try:
            socket.getaddrinfo("no-such-host.invalid", 443)  # .invalid never resolves
        except socket.gaierror as lookup:
            raise ConnectError(str(lookup)) from lookup
    except ConnectError as error:
        mapped = map_sdk_error(error, provider="openai", endpoint="https://no-such-host.invalid")
    else:
        pytest.fail("no-such-host.invalid resolved")
    if "unknown host" not in str(mapped):
        pytest.skip(f"this machine's resolver answers differently: {mapped}")
    assert not mapped.transient
    assert str(mapped) == (
        "Could not connect to openai at https://no-such-host.invalid: unknown host (check the "
        "base URL)."
    )


@pytest.mark.parametrize("name", PROVIDERS)
async def test_guard_stops_real_hosts_through_every_sdk(name: str) -> None:
    # Default endpoints: the real provider hosts. The guard fires in the transport,
    # before DNS or any connection, and the error is permanent (never retried).
    provider = create_provider(
        name,
        api_key="k",
        base_url=("https://api.example.com/v1" if name == "openai-compatible" else None),
    )
    with pytest.raises(ModelRequestBlocked) as caught:
        await collect(provider.stream(REQUEST))
    assert not caught.value.transient
    assert "LOOM_ALLOW_MODEL_REQUESTS=0" in str(caught.value)


ANTHROPIC_START = (
    'event: message_start\ndata: {"type": "message_start", "message": {"id": "m", '
    '"type": "message", "role": "assistant", "model": "x", "content": [], '
    '"stop_reason": null, "usage": {"input_tokens": 1, "output_tokens": 1}}}\n\n'
)


@pytest.mark.parametrize(
    ("name", "body", "status"),
    [
        (
            "anthropic",
            ANTHROPIC_START + 'event: error\ndata: {"type": "error", "error": '
            '{"type": "overloaded_error", "message": "Overloaded"}}\n\n',
            529,
        ),
        (
            "openai",
            'data: {"error": {"message": "upstream died", "type": "server_error"}}\n\n',
            500,
        ),
    ],
)
async def test_error_events_inside_a_stream_are_transient(
    name: str, body: str, status: int, server: FakeLlmServer
) -> None:
    error = await _fail(name, server, Turn(garbage=body))
    assert error.transient and error.status == status
    assert "Overloaded" in str(error) or "upstream died" in str(error)


async def test_stream_cut_short_is_transient(server: FakeLlmServer) -> None:
    error = await _fail("anthropic", server, Turn(garbage=ANTHROPIC_START))
    assert error.transient and "ended before" in str(error)


@pytest.mark.parametrize("name", PROVIDERS)
async def test_a_server_slower_than_the_timeout_is_a_transient_timeout(
    name: str, server: FakeLlmServer
) -> None:
    server.add(Turn(delay=1.0, text="too late"))
    provider = provider_for(name, server, timeout=0.2)
    with pytest.raises(LlmError) as caught:
        await collect(provider.stream(REQUEST))
    assert caught.value.transient and "timed out" in str(caught.value)
