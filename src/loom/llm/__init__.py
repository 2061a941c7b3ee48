"""LLM providers behind one streaming Provider protocol (see `loom.llm.base`).

Names are resolved lazily (PEP 562), so `from loom.llm.tokens import estimate_tokens`
does not pay for pydantic models or the registry, and the SDK adapters
(`loom.llm.anthropic`, `loom.llm.openai`, `loom.llm.google`) load only in
`create_provider`.
"""

from __future__ import annotations

import importlib
from typing import Any

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

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'loom.llm' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
