"""Offline pieces: token estimates, the model catalog, the retry policy."""

from __future__ import annotations

import random

import pytest

from loom.core.messages import AssistantMessage, ToolCall, ToolMessage, Usage, UserMessage
from loom.llm.base import LlmError
from loom.llm.catalog import DEFAULT_CONTEXT_WINDOW, cost_usd, known_models, model_info
from loom.llm.retry import RetryPolicy, is_transient, parse_retry_after, status_is_transient
from loom.llm.tokens import estimate_message_tokens, estimate_tokens

PROSE = (
    "Loom is a local-first AI coding assistant. A person points it at a project, talks "
    "to it, and it reads, searches, edits and runs code through tools, asking permission "
    "where it should. Every conversation is saved on this machine first."
)
CODE = """def transition(state: State, event: Event) -> tuple[State, list[Action]]:
    if isinstance(event, UserMessage):
        return replace(state, kind="CallingLlm"), [CallLlm(messages=state.messages)]
    raise ValueError(f"unexpected event {event!r} in {state.kind}")
"""


def test_token_estimates_are_in_the_usual_chars_per_token_range() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("hi") == 1
    # Real tokenizers give ~4-5 chars/token on English prose and ~3-4 on code.
    assert 3.6 <= len(PROSE) / estimate_tokens(PROSE) <= 5.5
    assert 2.5 <= len(CODE) / estimate_tokens(CODE) <= 4.5
    # Numbers split in groups of three digits; CJK costs about a token per character.
    assert estimate_tokens("1234567") == 3
    assert estimate_tokens("日本語のテキスト") == 8


def test_message_tokens_count_tool_calls_and_overhead() -> None:
    plain = estimate_message_tokens(UserMessage(content="read the file"))
    call = AssistantMessage(
        content="",
        tool_calls=[
            ToolCall(id="c1", tool_name="file_read", arguments_json={"path": "src/app/main.py"})
        ],
    )
    result = ToolMessage(tool_call_id="c1", tool_name="file_read", content=CODE)
    assert plain > estimate_tokens("read the file")
    assert estimate_message_tokens(call) > 8
    assert estimate_message_tokens(result) > estimate_tokens(CODE)
    assert estimate_message_tokens({"role": "user", "content": "read the file"}) == plain


@pytest.mark.parametrize(
    ("provider", "model", "expected_id"),
    [
        ("anthropic", "claude-sonnet-4-6", "claude-sonnet-4-6"),
        ("anthropic", "claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("anthropic", "claude-opus-4-20250514", "claude-opus-4"),
        ("openai", "gpt-4o-2024-08-06", "gpt-4o"),
        ("openai", "gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("openai", "gpt-5-mini", "gpt-5-mini"),
        ("google", "gemini-2.5-flash-preview-05-20", "gemini-2.5-flash"),
        ("openai-compatible", "anthropic/claude-haiku-4-5", "claude-haiku-4-5"),
    ],
)
def test_catalog_matches_dated_and_prefixed_ids(
    provider: str, model: str, expected_id: str
) -> None:
    info = model_info(provider, model)
    expected = next(m for m in known_models() if m.model_id == expected_id)
    assert info.known
    assert (info.context_window, info.input_price_per_mtok) == (
        expected.context_window,
        expected.input_price_per_mtok,
    )
    assert (info.provider, info.model_id) == (provider, model)


def test_catalog_covers_current_models_and_defaults_unknown_ones() -> None:
    for provider, model in [
        ("anthropic", "claude-opus-4-6"),
        ("anthropic", "claude-haiku-4-5"),
        ("openai", "gpt-5"),
        ("openai", "gpt-4.1"),
        ("openai", "o3"),
        ("google", "gemini-2.5-pro"),
        ("google", "gemini-2.5-flash"),
    ]:
        info = model_info(provider, model)
        assert info.known and info.context_window >= 128_000 and info.input_price_per_mtok > 0
    local = model_info("openai-compatible", "llama3.1:8b")
    assert not local.known
    assert local.context_window == DEFAULT_CONTEXT_WINDOW
    assert cost_usd(local, Usage(input_tokens=10_000, output_tokens=1_000)) == 0.0


def test_cost_prices_input_output_and_cache_separately() -> None:
    info = model_info("anthropic", "claude-sonnet-4-6")  # $3 in, $15 out, 0.1x / 1.25x cache
    usage = Usage(
        input_tokens=1_000_000,
        output_tokens=100_000,
        cache_read_tokens=1_000_000,
        cache_write_tokens=1_000_000,
    )
    assert cost_usd(info, usage) == pytest.approx(3.0 + 1.5 + 0.3 + 3.75)


@pytest.mark.parametrize(
    ("status", "transient"),
    [
        (400, False),
        (401, False),
        (403, False),
        (404, False),
        (408, True),
        (429, True),
        (500, True),
        (503, True),
        (529, True),
    ],
)
def test_status_classification(status: int, transient: bool) -> None:
    assert status_is_transient(status) is transient
    assert is_transient(LlmError("x", transient=transient, status=status)) is transient


def test_plain_exceptions_are_classified_without_importing_sdks() -> None:
    class ConnectError(Exception):
        pass

    class FakeStatusError(Exception):
        status_code = 401

    assert is_transient(TimeoutError())
    assert is_transient(ConnectionRefusedError())
    assert is_transient(ConnectError())
    assert not is_transient(FakeStatusError())
    assert not is_transient(ValueError("bad"))


def test_backoff_grows_caps_jitters_and_honours_retry_after() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=30.0, jitter=0.25, rng=random.Random(7))
    transient = LlmError("busy", transient=True, status=503)
    delays = [policy.delay(attempt, transient) for attempt in range(1, 8)]
    nominal = [1, 2, 4, 8, 16, 30, 30]
    for got, cap in zip(delays, nominal, strict=True):
        assert 0.75 * cap <= got <= cap
    assert (
        policy.delay(1, LlmError("slow down", transient=True, status=429, retry_after=7.0)) == 7.0
    )
    assert policy.delay(1, LlmError("x", transient=True, retry_after=1e6)) == 120.0
    assert policy.should_retry(4, transient) and not policy.should_retry(5, transient)
    assert not policy.should_retry(1, LlmError("bad key", transient=False, status=401))


def test_retry_after_header_forms() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("0.5") == 0.5
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past


def test_an_image_counts_in_the_context_budget() -> None:
    from loom.core.images import image_ref
    from loom.core.messages import UserMessage
    from loom.llm.tokens import IMAGE_TOKENS, estimate_message_tokens

    plain = UserMessage(content="see this")
    shot = image_ref("s.png", b"\x89PNG\r\n\x1a\n" + bytes(20))
    with_image = UserMessage(content="see this", images=[shot, shot])
    assert estimate_message_tokens(with_image) - estimate_message_tokens(plain) == 2 * IMAGE_TOKENS
