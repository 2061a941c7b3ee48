"""One reasoning knob for people, mapped onto each provider's own settings.

`--effort minimal|low|medium|high` (also `/effort`, `model.effort`, an agent file's
`effort:`) says how hard a reasoning model thinks. The catalog (`loom.llm.catalog`) says
which models reason and how (`ModelInfo.reasoning`); here each style gets its request
fields:

| style                | minimal        | low            | medium          | high            |
|----------------------|----------------|----------------|-----------------|-----------------|
| `openai-reasoning`   | minimal / low  | low            | medium          | high            |
| `anthropic-budget`   | 1,024 tokens   | 4,096          | 10,000          | 32,000          |
| `anthropic-adaptive` | effort low     | low            | medium          | high            |
| `gemini-budget`      | 512 tokens     | 2,048          | 8,192           | 24,576          |
| `gemini-level`       | low (minimal on Flash) | low    | high (medium on Flash) | high     |

With no effort set, each family keeps a default that costs nothing unexpected: OpenAI's
reasoning models `medium` (the API's own default, with summaries shown), Gemini's thinking
models their dynamic thinking (summaries shown), and Claude no thinking (thinking bills
output tokens and turns temperature off): `--effort` turns it on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from loom.llm.catalog import ModelInfo, model_info

EFFORTS = ("minimal", "low", "medium", "high")

_ANTHROPIC_BUDGET = {"minimal": 1024, "low": 4096, "medium": 10_000, "high": 32_000}
_GEMINI_BUDGET = {"minimal": 512, "low": 2048, "medium": 8192, "high": 24_576}
# GPT-5 (and its mini and nano) take "minimal"; later and o-series models start at "low"
_OPENAI_MINIMAL = frozenset({"gpt-5", "gpt-5-mini", "gpt-5-nano"})
ANTHROPIC_MIN_BUDGET = 1024  # the API refuses less
ANTHROPIC_ANSWER_ROOM = 1024  # max_tokens keeps at least this above the budget


def check_effort(value: object, where: str = "effort") -> str | None:
    """`value` as an effort name (None stays None); a ValueError names what is allowed."""
    if value is None or value == "":
        return None
    text = str(value).strip().lower()
    if text not in EFFORTS:
        raise ValueError(f"{where} must be one of {', '.join(EFFORTS)}, not {value!r}")
    return text


def reasons(provider: str, model_id: str) -> bool:
    """Whether the catalog knows `provider:model_id` to reason."""
    return model_info(provider, model_id).reasoning is not None


def least_effort(provider: str, model_id: str) -> str | None:
    """The effort for a call that needs no thinking (a compaction summary): "minimal"
    for families that always think, None (no thinking) for Claude and the rest."""
    style = model_info(provider, model_id).reasoning
    return "minimal" if style in ("openai-reasoning", "gemini-budget", "gemini-level") else None


def ignored_note(provider: str, model_id: str, effort: str | None) -> str | None:
    """The one line saying an effort is ignored, for a model that cannot reason."""
    if effort is None or reasons(provider, model_id):
        return None
    return f"{provider}:{model_id} does not reason; effort {effort} is ignored for it."


@dataclass(frozen=True)
class AnthropicThinking:
    """Claude's request fields for an effort: `thinking`, maybe `output_config`, and the
    `max_tokens` that leaves room for an answer above the budget."""

    thinking: dict[str, Any]
    output_config: dict[str, Any] | None
    max_tokens: int
    interleaved: bool  # send the interleaved-thinking beta header (budget models)


def anthropic_thinking(
    info: ModelInfo, effort: str | None, max_tokens: int
) -> AnthropicThinking | None:
    """None: no thinking (no effort set, or a model that does not think)."""
    if effort is None or info.reasoning not in ("anthropic-budget", "anthropic-adaptive"):
        return None
    if info.reasoning == "anthropic-adaptive":
        level = "low" if effort == "minimal" else effort
        return AnthropicThinking({"type": "adaptive"}, {"effort": level}, max_tokens, False)
    ceiling = max(info.max_output_tokens, ANTHROPIC_MIN_BUDGET + ANTHROPIC_ANSWER_ROOM)
    total = min(ceiling, _ANTHROPIC_BUDGET[effort] + max_tokens)
    budget = max(
        ANTHROPIC_MIN_BUDGET, min(_ANTHROPIC_BUDGET[effort], total - ANTHROPIC_ANSWER_ROOM)
    )
    thinking = {"type": "enabled", "budget_tokens": budget}
    return AnthropicThinking(thinking, None, max(total, budget + ANTHROPIC_ANSWER_ROOM), True)


def openai_reasoning(info: ModelInfo, effort: str | None) -> dict[str, Any] | None:
    """The Responses API's `reasoning` field (None for a model that does not reason)."""
    if info.reasoning != "openai-reasoning":
        return None
    level = effort or "medium"
    if level == "minimal" and _catalogued_id(info) not in _OPENAI_MINIMAL:
        level = "low"
    return {"effort": level, "summary": "auto"}


def openai_chat_effort(info: ModelInfo, effort: str | None) -> str | None:
    """Chat Completions' `reasoning_effort` (no summaries there): set only when asked."""
    reasoning = openai_reasoning(info, effort) if effort is not None else None
    return reasoning["effort"] if reasoning else None


def gemini_thinking(info: ModelInfo, effort: str | None) -> dict[str, Any] | None:
    """Gemini's `generationConfig.thinkingConfig` (None for a model that does not think)."""
    if info.reasoning == "gemini-budget":
        config: dict[str, Any] = {"includeThoughts": True}
        if effort is not None:
            config["thinkingBudget"] = _GEMINI_BUDGET[effort]
        return config
    if info.reasoning == "gemini-level":
        config = {"includeThoughts": True}
        if effort is not None:
            config["thinkingLevel"] = _gemini_level(_catalogued_id(info), effort)
        return config
    return None


def _gemini_level(model_id: str, effort: str) -> str:
    if "flash" in model_id:
        return effort  # Flash takes minimal, low, medium and high
    return "low" if effort in ("minimal", "low") else "high"  # Pro: low and high


def _catalogued_id(info: ModelInfo) -> str:
    """The model id as catalogued, without a date or a provider path."""
    return info.model_id.strip().lower().rsplit("/", 1)[-1]
