"""LLM providers behind one streaming Provider protocol (see `loom.llm.base`).

Everything exported here is cheap to import: the SDK adapters (`loom.llm.anthropic`,
`loom.llm.openai`, `loom.llm.google`) and their SDKs load only in `create_provider`.
"""

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
