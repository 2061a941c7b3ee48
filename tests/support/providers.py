"""The providers' real SDK adapters pointed at the fake LLM server."""

from __future__ import annotations

from typing import Any

from tests.fakes.llm_server import FakeLlmServer

PROVIDERS = ["anthropic", "openai", "openai-compatible", "google"]


def provider_for(name: str, server: FakeLlmServer, **kwargs: object) -> Any:
    """Provider `name` (a loom.llm Provider) with a test key, talking to `server`."""
    from loom.llm.registry import create_provider

    url = server.openai_base_url if name.startswith("openai") else server.base_url
    return create_provider(name, api_key="test-key", base_url=url, **kwargs)  # type: ignore[arg-type]
