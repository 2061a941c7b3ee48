"""Model names and provider construction: the bad-input paths and env handling."""

from __future__ import annotations

import pytest

from loom.llm.base import LlmError
from loom.llm.registry import ModelConfigError, create_provider, parse_model_name, provider_names


def test_parse_model_name_splits_on_the_first_colon() -> None:
    assert parse_model_name("anthropic:claude-sonnet-4-6") == ("anthropic", "claude-sonnet-4-6")
    assert parse_model_name(" OpenAI:gpt-4o ") == ("openai", "gpt-4o")
    assert parse_model_name("gemini:gemini-2.5-pro") == ("google", "gemini-2.5-pro")
    assert parse_model_name("openai-compatible:llama3.1:8b") == ("openai-compatible", "llama3.1:8b")


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("claude-sonnet-4-6", "anthropic:claude-sonnet-4-6"),  # suggests the fix
        ("gpt-4o", "openai:gpt-4o"),
        ("anthropic:", "malformed"),
        (":gpt-4o", "malformed"),
        ("", "No model given"),
        ("mistral:large", "Unknown provider 'mistral'"),
    ],
)
def test_bad_model_names_say_what_to_write(name: str, fragment: str) -> None:
    with pytest.raises(ModelConfigError) as caught:
        parse_model_name(name)
    assert fragment in str(caught.value)
    # A config error is a permanent LlmError and a ValueError: never retried.
    assert isinstance(caught.value, LlmError) and not caught.value.transient
    assert isinstance(caught.value, ValueError)


def test_unknown_provider_lists_known_ones() -> None:
    with pytest.raises(ModelConfigError) as caught:
        create_provider("mistral")
    for name in ("anthropic", "openai", "google", "openai-compatible"):
        assert name in str(caught.value)
    assert set(provider_names()) >= {"anthropic", "openai", "google", "openai-compatible"}


@pytest.mark.parametrize(
    ("provider", "variables"),
    [("anthropic", "ANTHROPIC_API_KEY"), ("openai", "OPENAI_API_KEY"),
     ("google", "GEMINI_API_KEY or GOOGLE_API_KEY")],
)
def test_missing_api_key_names_the_variable(provider: str, variables: str) -> None:
    with pytest.raises(ModelConfigError) as caught:
        create_provider(provider)
    assert "No API key" in str(caught.value) and variables in str(caught.value)
    assert "config" in str(caught.value)


def test_openai_compatible_needs_a_base_url_but_no_key() -> None:
    with pytest.raises(ModelConfigError) as caught:
        create_provider("openai-compatible")
    assert "OPENAI_COMPATIBLE_BASE_URL" in str(caught.value)
