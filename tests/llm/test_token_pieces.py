"""The ASCII fast path of the token estimate finds the very pieces the one-alternation
scan finds (`loom.llm.tokens._estimate`)."""

from __future__ import annotations

import random
from pathlib import Path

from loom.llm import tokens


def test_the_fast_path_counts_what_the_piece_by_piece_scan_counts() -> None:
    source = Path(tokens.__file__).read_text(encoding="utf-8")
    rng = random.Random(7)
    alphabet = (
        "aAbBzZ09 \t\n\r\x0b\x0c\x1c\x1f\x00\x7f  ()->=:;.,_-{}[]\"'\\camelCaseHTTPServer1234"
    )
    samples = [source, source.upper(), "x" * 40, "HTTPServerError snake_case_name 12345"]
    samples += [
        "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80))) for _ in range(3000)
    ]
    for text in samples:
        assert abs(tokens._estimate(text) - tokens._estimate_by_piece(text)) < 1e-6, repr(text)


def test_non_ascii_text_takes_the_piece_by_piece_scan() -> None:
    text = "naïve café\n\u00a0\u2028 日本語 emoji 🙂"
    assert tokens._estimate(text) == tokens._estimate_by_piece(text)


def test_the_ceiling_from_lengths_is_never_below_the_estimate() -> None:
    from loom.core.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage

    rng = random.Random(11)
    alphabet = 'aAzZ09 \t\n\r\x1c()->=_.,"é日🙂' + "word " * 3
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        call = ToolCall(id="c", tool_name=text[:8] or "t", arguments_json={"k": text})
        for message in (
            UserMessage(content=text),
            AssistantMessage(content=text, tool_calls=[call]),
            ToolMessage(content=text, tool_call_id="c", tool_name="read"),
        ):
            ceiling = tokens.message_tokens_ceiling(message)
            assert ceiling >= tokens.estimate_message_tokens(message), repr(text)
    huge = "x" * (tokens.SAMPLE_ABOVE + 5) + "日本" * 50_000  # the sampled estimate too
    assert tokens.message_tokens_ceiling(UserMessage(content=huge)) >= (
        tokens.estimate_message_tokens(UserMessage(content=huge))
    )


def test_reasoning_sent_back_with_an_answer_counts_toward_the_window() -> None:
    """Thinking text and opaque reasoning go back with the answer (issue 35): the history
    budget counts them, so a long chain of reasoning cannot overflow the window."""
    from loom.core.messages import AssistantMessage, ReasoningPart

    plain = AssistantMessage(content="done")
    thought = "Let me check each caller of the parser before changing it. " * 40
    reasoned = AssistantMessage(
        content="done",
        reasoning=[
            ReasoningPart(kind="thinking", provider="anthropic", text=thought, signature="s" * 400),
            ReasoningPart(kind="reasoning", provider="openai", data="A" * 8_000),
        ],
    )
    added = tokens.estimate_message_tokens(reasoned) - tokens.estimate_message_tokens(plain)
    assert added >= tokens.estimate_tokens(thought) + 2_000
    assert tokens.message_tokens_ceiling(reasoned) >= tokens.estimate_message_tokens(reasoned)
