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
    [
        ("anthropic", "ANTHROPIC_API_KEY"),
        ("openai", "OPENAI_API_KEY"),
        ("google", "GEMINI_API_KEY or GOOGLE_API_KEY"),
    ],
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


async def test_keys_and_endpoints_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from loom.core.messages import UserMessage
    from loom.llm.base import LlmRequest, collect
    from loom.llm.registry import provider_for_model
    from tests.fakes.llm_server import FakeLlmServer, Turn

    request = LlmRequest(model="", messages=[UserMessage(content="hi")])
    with FakeLlmServer([Turn(text="a"), Turn(text="b"), Turn(text="c"), Turn(text="d")]) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-env")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.openai_base_url)
        monkeypatch.setenv("GOOGLE_API_KEY", "g-env")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_COMPATIBLE_BASE_URL", fake.openai_base_url)
        replies = []
        for model in (
            "anthropic:claude-haiku-4-5",
            "openai:gpt-4.1",
            "google:gemini-2.5-flash",
            "openai-compatible:llama3.1:8b",
        ):
            provider, model_id = provider_for_model(model)
            response = await collect(
                provider.stream(LlmRequest(model=model_id, messages=request.messages))
            )
            replies.append(response.content)
        assert replies == ["a", "b", "c", "d"]
        sent = fake.requests
        assert sent[0].json["model"] == "claude-haiku-4-5"
        assert "sk-ant-env" in (
            sent[0].headers.get("x-api-key", "") + sent[0].headers.get("authorization", "")
        )
        assert sent[1].headers["authorization"] == "Bearer sk-openai-env"
        assert sent[2].headers.get("x-goog-api-key") == "g-env"
        assert sent[2].path.endswith("gemini-2.5-flash:streamGenerateContent")
        assert sent[3].json["model"] == "llama3.1:8b"


def test_explicit_arguments_beat_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    provider = create_provider("openai", api_key="explicit", base_url="http://127.0.0.1:2/v1")
    assert "127.0.0.1:2" in provider.endpoint  # type: ignore[attr-defined]


def test_registry_import_does_not_load_sdks() -> None:
    import subprocess
    import sys

    code = (
        "import sys, loom.llm.registry, loom.llm.catalog, loom.llm.tokens, "
        "loom.llm.retry, loom.llm.guard\n"
        "heavy = [m for m in ('anthropic', 'openai', 'google.genai', 'httpx2') "
        "if m in sys.modules]\n"
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
