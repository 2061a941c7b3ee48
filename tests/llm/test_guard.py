"""The model-request guard: non-loopback hosts fail before any network I/O."""

from __future__ import annotations

import pytest

from loom.llm.guard import (
    ModelRequestBlocked,
    check_model_request,
    guarded_async_client,
    is_loopback_host,
)


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "127.8.9.10", "localhost", "::1", "[::1]", "api.localhost"]
)
def test_loopback_hosts(host: str) -> None:
    assert is_loopback_host(host)


@pytest.mark.parametrize(
    "host", ["api.anthropic.com", "10.0.0.1", "0.0.0.0", "example.com", "localhost.example.com"]
)
def test_other_hosts_are_not_loopback(host: str) -> None:
    assert not is_loopback_host(host)


def test_guard_blocks_real_hosts_only_when_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    check_model_request("http://127.0.0.1:9/v1/messages")  # loopback always passes
    with pytest.raises(ModelRequestBlocked) as caught:
        check_model_request("https://api.openai.com/v1/chat/completions")
    assert "api.openai.com" in str(caught.value)
    assert "LOOM_ALLOW_MODEL_REQUESTS=0" in str(caught.value)
    assert not caught.value.transient
    monkeypatch.setenv("LOOM_ALLOW_MODEL_REQUESTS", "1")
    check_model_request("https://api.openai.com/v1/chat/completions")


async def test_guarded_client_raises_before_connecting() -> None:
    # An unroutable documentation address: if the guard did not fire first, this would
    # be a connect error or timeout, not ModelRequestBlocked.
    async with guarded_async_client(timeout=5.0) as client:
        with pytest.raises(ModelRequestBlocked):
            await client.get("https://192.0.2.1/v1/models")
