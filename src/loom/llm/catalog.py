"""Model catalog: context window, output limit and prices per model.

Prices are US dollars per million tokens, list prices as published by each provider
(standard tier, prompts under any long-context surcharge threshold). Lookups accept
dated or suffixed ids (`claude-sonnet-4-5-20250929`, `gpt-4o-2024-08-06`,
`gemini-2.5-flash-preview-05-20`) by longest known prefix. Unknown models (local ones
behind `openai-compatible`, new releases) get a conservative default with zero price
and `known=False`, so budgeting still works and cost shows as unknown rather than wrong.

Usage convention (all adapters report it this way): `input_tokens` are prompt tokens
billed at the full input price, i.e. *excluding* cache reads and cache writes, which
are reported separately in `cache_read_tokens` / `cache_write_tokens`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, replace

from loom.core.messages import Usage


@dataclass(frozen=True)
class ModelInfo:
    provider: str
    model_id: str
    context_window: int
    max_output_tokens: int
    input_price_per_mtok: float
    output_price_per_mtok: float
    cache_read_price_per_mtok: float | None = None  # None: same as input price
    cache_write_price_per_mtok: float | None = None  # None: same as input price
    supports_tools: bool = True
    known: bool = True
    supports_images: bool = True  # image input (screenshots, file_read of an image)
    # cache writes kept an hour ([model] cache_ttl = "1h"); None: the 5-minute price
    cache_write_1h_price_per_mtok: float | None = None
    # how the model reasons (None: it does not): "anthropic-budget" (thinking with
    # budget_tokens), "anthropic-adaptive" (adaptive thinking with an effort),
    # "openai-reasoning" (reasoning.effort), "gemini-budget" (thinkingBudget), "gemini-level"
    # (thinkingLevel); `loom.llm.effort` maps the effort knob onto each
    reasoning: str | None = None
    needs_responses: bool = False  # OpenAI: served only by the Responses API


def _m(
    provider: str,
    model_id: str,
    context: int,
    output: int,
    price_in: float,
    price_out: float,
    cache_read: float | None = None,
    cache_write: float | None = None,
) -> ModelInfo:
    return ModelInfo(
        provider, model_id, context, output, price_in, price_out, cache_read, cache_write
    )


def _anthropic(model_id: str, output: int, price_in: float, price_out: float) -> ModelInfo:
    # Anthropic: cache reads cost 0.1x input, 5-minute cache writes 1.25x, 1-hour 2x.
    info = _m(
        "anthropic",
        model_id,
        200_000,
        output,
        price_in,
        price_out,
        round(price_in * 0.1, 4),
        round(price_in * 1.25, 4),
    )
    return replace(info, cache_write_1h_price_per_mtok=round(price_in * 2, 4))


def _reasons(info: ModelInfo, style: str, *, responses_only: bool = False) -> ModelInfo:
    return replace(info, reasoning=style, needs_responses=responses_only)


_CATALOG_PLAIN: tuple[ModelInfo, ...] = (
    # -- Anthropic --------------------------------------------------------------------
    _anthropic("claude-opus-4-6", 128_000, 5.0, 25.0),
    _anthropic("claude-sonnet-4-6", 64_000, 3.0, 15.0),
    _anthropic("claude-opus-4-5", 64_000, 5.0, 25.0),
    _anthropic("claude-sonnet-4-5", 64_000, 3.0, 15.0),
    _anthropic("claude-haiku-4-5", 64_000, 1.0, 5.0),
    _anthropic("claude-opus-4-1", 32_000, 15.0, 75.0),
    _anthropic("claude-opus-4", 32_000, 15.0, 75.0),
    _anthropic("claude-sonnet-4", 64_000, 3.0, 15.0),
    _anthropic("claude-3-7-sonnet", 64_000, 3.0, 15.0),
    _anthropic("claude-3-5-sonnet", 8_192, 3.0, 15.0),
    _anthropic("claude-3-5-haiku", 8_192, 0.8, 4.0),
    _anthropic("claude-3-haiku", 4_096, 0.25, 1.25),
    # -- OpenAI -----------------------------------------------------------------------
    _m("openai", "gpt-5.2", 400_000, 128_000, 1.75, 14.0, 0.175),
    _m("openai", "gpt-5.1", 400_000, 128_000, 1.25, 10.0, 0.125),
    _m("openai", "gpt-5", 400_000, 128_000, 1.25, 10.0, 0.125),
    _m("openai", "gpt-5-mini", 400_000, 128_000, 0.25, 2.0, 0.025),
    _m("openai", "gpt-5-nano", 400_000, 128_000, 0.05, 0.40, 0.005),
    _m("openai", "gpt-5-codex", 400_000, 128_000, 1.25, 10.0, 0.125),
    _m("openai", "gpt-4.1", 1_047_576, 32_768, 2.0, 8.0, 0.5),
    _m("openai", "gpt-4.1-mini", 1_047_576, 32_768, 0.40, 1.60, 0.10),
    _m("openai", "gpt-4.1-nano", 1_047_576, 32_768, 0.10, 0.40, 0.025),
    _m("openai", "gpt-4o", 128_000, 16_384, 2.50, 10.0, 1.25),
    _m("openai", "gpt-4o-mini", 128_000, 16_384, 0.15, 0.60, 0.075),
    _m("openai", "o1", 200_000, 100_000, 15.0, 60.0, 7.5),
    _m("openai", "o3", 200_000, 100_000, 2.0, 8.0, 0.5),
    _m("openai", "o3-pro", 200_000, 100_000, 20.0, 80.0),
    replace(_m("openai", "o3-mini", 200_000, 100_000, 1.10, 4.40, 0.55), supports_images=False),
    _m("openai", "o4-mini", 200_000, 100_000, 1.10, 4.40, 0.275),
    # -- Google -----------------------------------------------------------------------
    _m("google", "gemini-3-pro", 1_048_576, 65_536, 2.0, 12.0, 0.20),
    _m("google", "gemini-3-flash", 1_048_576, 65_536, 0.50, 3.0, 0.05),
    _m("google", "gemini-2.5-pro", 1_048_576, 65_536, 1.25, 10.0, 0.125),
    _m("google", "gemini-2.5-flash", 1_048_576, 65_536, 0.30, 2.50, 0.03),
    _m("google", "gemini-2.5-flash-lite", 1_048_576, 65_536, 0.10, 0.40, 0.01),
    _m("google", "gemini-2.0-flash", 1_048_576, 8_192, 0.10, 0.40, 0.025),
    _m("google", "gemini-2.0-flash-lite", 1_048_576, 8_192, 0.075, 0.30),
    _m("openai", "gpt-5.1-codex", 400_000, 128_000, 1.25, 10.0, 0.125),
    _m("openai", "gpt-5-pro", 400_000, 272_000, 15.0, 120.0),
)

# Which models reason, how, and which need the Responses API (by catalogued id).
_REASONING: dict[str, str] = {
    **dict.fromkeys(("claude-opus-4-6", "claude-sonnet-4-6"), "anthropic-adaptive"),
    **dict.fromkeys(
        (
            "claude-opus-4-5",
            "claude-sonnet-4-5",
            "claude-haiku-4-5",
            "claude-opus-4-1",
            "claude-opus-4",
            "claude-sonnet-4",
            "claude-3-7-sonnet",
        ),
        "anthropic-budget",
    ),
    **dict.fromkeys(
        (
            "gpt-5.2",
            "gpt-5.1",
            "gpt-5",
            "gpt-5-mini",
            "gpt-5-nano",
            "gpt-5-codex",
            "gpt-5.1-codex",
            "gpt-5-pro",
            "o1",
            "o3",
            "o3-pro",
            "o3-mini",
            "o4-mini",
        ),
        "openai-reasoning",
    ),
    **dict.fromkeys(("gemini-3-pro", "gemini-3-flash"), "gemini-level"),
    **dict.fromkeys(
        ("gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite"), "gemini-budget"
    ),
}
_RESPONSES_ONLY = frozenset({"gpt-5-codex", "gpt-5.1-codex", "gpt-5-pro", "o3-pro"})

_CATALOG: tuple[ModelInfo, ...] = tuple(
    _reasons(info, _REASONING[info.model_id], responses_only=info.model_id in _RESPONSES_ONLY)
    if info.model_id in _REASONING
    else info
    for info in _CATALOG_PLAIN
)

_BY_ID: dict[str, ModelInfo] = {info.model_id: info for info in _CATALOG}

# Unknown models: a window small enough for most local models to honour.
DEFAULT_CONTEXT_WINDOW = 32_768
DEFAULT_MAX_OUTPUT_TOKENS = 4_096


def known_models(provider: str | None = None) -> list[ModelInfo]:
    """Every catalogued model, optionally only one provider's."""
    return [info for info in _CATALOG if provider is None or info.provider == provider]


@functools.lru_cache(maxsize=256)  # asked on every model call; ModelInfo is frozen
def model_info(provider: str, model_id: str) -> ModelInfo:
    """Facts about `provider:model_id`; a conservative, zero-price default if unknown.

    The catalog is consulted for every provider, so `openai-compatible:gpt-4o` (e.g.
    through a proxy) still gets gpt-4o's window, and ids such as
    `anthropic/claude-sonnet-4-6` (OpenRouter style) match on their last segment.
    """
    key = model_id.strip().lower().rsplit("/", 1)[-1]
    found = _BY_ID.get(key)
    if found is None:
        # Longest catalogued prefix followed by a separator: "gpt-4o-2024-08-06" -> gpt-4o,
        # but "gpt-4o-mini-..." -> gpt-4o-mini because it is longer.
        candidates = [
            info
            for known_id, info in _BY_ID.items()
            if key.startswith(known_id)
            and key[len(known_id) : len(known_id) + 1] in ("-", "@", ":")
        ]
        if candidates:
            found = max(candidates, key=lambda info: len(info.model_id))
    if found is None:
        return ModelInfo(
            provider,
            model_id,
            DEFAULT_CONTEXT_WINDOW,
            DEFAULT_MAX_OUTPUT_TOKENS,
            0.0,
            0.0,
            known=False,
            supports_images=False,  # a local model: say so rather than send what it drops
        )
    return replace(found, provider=provider, model_id=model_id)


def takes_images(provider: str, model_id: str, told: Mapping[str, bool] | None = None) -> bool:
    """Whether `provider:model_id` takes images as input: as the person told (config
    `[models."provider:model"] images`, in `told`), else as the catalog knows."""
    said = (told or {}).get(f"{provider}:{model_id}")
    return model_info(provider, model_id).supports_images if said is None else said


def cost_usd(info: ModelInfo, usage: Usage, cache_ttl: str = "5m") -> float:
    """Dollar cost of one response's usage (see the module docstring's convention);
    cache writes at the price of how long they are kept (`cache_ttl`)."""
    cache_read_price = (
        info.input_price_per_mtok
        if info.cache_read_price_per_mtok is None
        else info.cache_read_price_per_mtok
    )
    cache_write_price = (
        info.input_price_per_mtok
        if info.cache_write_price_per_mtok is None
        else info.cache_write_price_per_mtok
    )
    if cache_ttl == "1h" and info.cache_write_1h_price_per_mtok is not None:
        cache_write_price = info.cache_write_1h_price_per_mtok
    total = (
        usage.input_tokens * info.input_price_per_mtok
        + usage.output_tokens * info.output_price_per_mtok
        + (usage.cache_read_tokens or 0) * cache_read_price
        + (usage.cache_write_tokens or 0) * cache_write_price
    )
    return total / 1_000_000
