"""LLM providers behind one streaming Provider protocol (see `loom.llm.base`).

Names are resolved lazily (PEP 562), so `from loom.llm.tokens import estimate_tokens`
does not pay for pydantic models or the registry, and the SDK adapters
(`loom.llm.anthropic`, `loom.llm.openai`, `loom.llm.google`) load only in
`create_provider`.
"""

from __future__ import annotations

from loom._lazy import lazy_attributes as _lazy_attributes

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing this package stays free
if TYPE_CHECKING:
    from loom.llm.base import (
        RAW_ARGUMENTS_KEY,
        LlmError,
        LlmRequest,
        LlmResponse,
        Provider,
        StreamEnd,
        StreamEvent,
        TextDelta,
        ToolCallReady,
        ToolSpec,
        UsageReport,
        collect,
        invalid_arguments_text,
    )
    from loom.llm.catalog import ModelInfo, cost_usd, model_info
    from loom.llm.guard import ModelRequestBlocked
    from loom.llm.registry import (
        ModelConfigError,
        create_provider,
        parse_model_name,
        provider_for_model,
    )
    from loom.llm.retry import RetryPolicy, is_transient
    from loom.llm.tokens import estimate_message_tokens, estimate_tokens

_EXPORTS: dict[str, str] = {
    **dict.fromkeys(
        (
            "RAW_ARGUMENTS_KEY",
            "LlmError",
            "LlmRequest",
            "LlmResponse",
            "Provider",
            "StreamEnd",
            "StreamEvent",
            "TextDelta",
            "ToolCallReady",
            "ToolSpec",
            "UsageReport",
            "collect",
            "invalid_arguments_text",
        ),
        "loom.llm.base",
    ),
    **dict.fromkeys(("ModelInfo", "cost_usd", "model_info"), "loom.llm.catalog"),
    "ModelRequestBlocked": "loom.llm.guard",
    **dict.fromkeys(
        ("ModelConfigError", "create_provider", "parse_model_name", "provider_for_model"),
        "loom.llm.registry",
    ),
    **dict.fromkeys(("RetryPolicy", "is_transient"), "loom.llm.retry"),
    **dict.fromkeys(("estimate_message_tokens", "estimate_tokens"), "loom.llm.tokens"),
}

# the names of _EXPORTS, spelled out so the type checker reads them (tests/llm/test_exports.py)
__all__ = [
    "RAW_ARGUMENTS_KEY",
    "LlmError",
    "LlmRequest",
    "LlmResponse",
    "ModelConfigError",
    "ModelInfo",
    "ModelRequestBlocked",
    "Provider",
    "RetryPolicy",
    "StreamEnd",
    "StreamEvent",
    "TextDelta",
    "ToolCallReady",
    "ToolSpec",
    "UsageReport",
    "collect",
    "cost_usd",
    "create_provider",
    "estimate_message_tokens",
    "estimate_tokens",
    "invalid_arguments_text",
    "is_transient",
    "model_info",
    "parse_model_name",
    "provider_for_model",
]


__getattr__ = _lazy_attributes(__name__, _EXPORTS, globals())


def __dir__() -> list[str]:
    return __all__
