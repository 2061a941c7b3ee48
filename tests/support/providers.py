"""The providers' real SDK adapters pointed at the fake LLM server."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.llm_server import FakeLlmServer, Turn

PROVIDERS = ["anthropic", "openai", "openai-compatible", "google"]


def provider_for(name: str, server: FakeLlmServer, **kwargs: object) -> Any:
    """Provider `name` (a loom.llm Provider) with a test key, talking to `server`."""
    from loom.llm.registry import create_provider

    url = server.openai_base_url if name.startswith("openai") else server.base_url
    return create_provider(name, api_key="test-key", base_url=url, **kwargs)  # type: ignore[arg-type]


def count_calls(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[int]:
    """Count the calls of `owner.name` (still made) in a one-item list, for the test."""
    calls = [0]
    original = getattr(owner, name)

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counting)
    return calls


# How a provider's request fails, by name: each way must fail the same on every path.
FAILING_TURNS = {
    "429": Turn(status=429, retry_after=7, error_message="slow down please"),
    "500": Turn(status=500),
    "401": Turn(status=401, error_message="nope"),
    "404": Turn(status=404, error_message="no such model"),
    "html": Turn(garbage="<html>login page</html>", content_type="text/html"),
    "timeout": Turn(delay=1.0, text="too late"),
}


def failure_timeout(turn: Turn) -> float:
    """A short client timeout only where the timeout is the point: a loaded CI machine
    can take longer than that to answer a scripted 500."""
    return 0.3 if turn.delay else 30.0


def assert_same_failure(later: BaseException, first: BaseException) -> None:
    """Two LlmErrors say and mean the same, from the same kind of SDK error."""
    said = [(str(e), e.transient, e.status, e.retry_after) for e in (later, first)]  # type: ignore[attr-defined]
    assert said[0] == said[1]
    assert type(later.__cause__) is type(first.__cause__)
