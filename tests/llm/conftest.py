"""Fixtures: a fake LLM server per test and providers pointed at it through their SDKs."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from loom.llm.base import Provider
from loom.llm.registry import create_provider
from tests.fakes.llm_server import FakeLlmServer

PROVIDERS = ["anthropic", "openai", "openai-compatible", "google"]


@pytest.fixture
def server() -> Iterator[FakeLlmServer]:
    with FakeLlmServer() as fake:
        yield fake


def provider_for(name: str, server: FakeLlmServer, **kwargs: object) -> Provider:
    url = server.openai_base_url if name.startswith("openai") else server.base_url
    return create_provider(name, api_key="test-key", base_url=url, **kwargs)  # type: ignore[arg-type]


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
