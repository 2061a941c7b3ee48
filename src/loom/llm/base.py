"""The Provider protocol: one streamed request in, text deltas / tool calls / usage out.

Every adapter (anthropic, openai, google, openai-compatible, scripted) implements
`Provider.stream`. Errors are raised as `LlmError` with `transient` set, so the retry
policy never needs to know which SDK raised them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from loom.core.jsonish import is_json_object
from loom.core.messages import Message, ReasoningPart, ToolCall, Usage


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model sees it: name, description, JSON schema of its parameters."""

    name: str
    description: str
    parameters: dict[str, Any]


CacheTtl = Literal["5m", "1h"]


@dataclass(frozen=True)
class LlmRequest:
    """One call. `system`, `tools` and `messages` are the prefix a provider caches: the
    same bytes call after call. `context` is what changes per call (the repo map, the
    decision zone, notes): the adapter sends it after the conversation (with the newest
    user message or after the newest tool results), never in the prefix. `cache_key`
    names the conversation for providers that route their cache by a key (OpenAI's
    `prompt_cache_key`); `cache_ttl` is how long Anthropic keeps what a call writes."""

    model: str  # the model id without the provider prefix, e.g. "claude-sonnet-4-6"
    messages: Sequence[Message]
    system: str = ""
    tools: Sequence[ToolSpec] = ()
    max_tokens: int = 8192
    temperature: float | None = None
    # how hard a reasoning model thinks: "minimal", "low", "medium", "high", or None
    # for the model family's default (`loom.llm.effort`)
    effort: str | None = None
    context: str = ""
    cache_key: str | None = None
    cache_ttl: CacheTtl = "5m"


# -- stream events -------------------------------------------------------------------


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    """Readable reasoning as it streams (thinking, a summary); shown dimmed."""

    text: str


@dataclass(frozen=True)
class ReasoningReady:
    """A complete reasoning part to keep on the answer and send back later."""

    part: ReasoningPart


@dataclass(frozen=True)
class ToolCallReady:
    """A complete tool call (adapters assemble streamed argument fragments first)."""

    call: ToolCall


@dataclass(frozen=True)
class UsageReport:
    usage: Usage


@dataclass(frozen=True)
class StreamEnd:
    stop_reason: str  # "end_turn", "tool_use", "max_tokens", ...


StreamEvent = TextDelta | ThinkingDelta | ReasoningReady | ToolCallReady | UsageReport | StreamEnd


@dataclass
class LlmResponse:
    """A whole response, collected from a stream."""

    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    stop_reason: str = "end_turn"
    reasoning: list[ReasoningPart] = field(default_factory=list)


class LlmError(Exception):
    """A failed model call. `transient` errors (429, 5xx, 529, timeouts, connection
    errors) are retried with backoff; permanent ones (400, 401, 403, 404) are not."""

    def __init__(
        self,
        message: str,
        *,
        transient: bool,
        status: int | None = None,
        provider: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.transient = transient
        self.status = status
        self.provider = provider
        self.retry_after = retry_after


@runtime_checkable
class Provider(Protocol):
    name: str  # "anthropic", "openai", "google", "openai-compatible", "scripted"

    def stream(self, request: LlmRequest) -> AsyncIterator[StreamEvent]: ...


async def collect(stream: AsyncIterator[StreamEvent]) -> LlmResponse:
    """Drain a stream into one LlmResponse."""
    response = LlmResponse()
    parts: list[str] = []
    async for event in stream:
        if isinstance(event, TextDelta):
            parts.append(event.text)
        elif isinstance(event, ToolCallReady):
            response.tool_calls.append(event.call)
        elif isinstance(event, ReasoningReady):
            response.reasoning.append(event.part)
        elif isinstance(event, UsageReport):
            response.usage = event.usage
        elif isinstance(event, StreamEnd):
            response.stop_reason = event.stop_reason
    response.content = "".join(parts)
    return response


# -- tool-call arguments as streamed by models -------------------------------------------

# When a model streams tool-call arguments that are not a JSON object, the adapter keeps
# the raw text under this key (the only key) so the session can tell the model exactly
# what it sent and how to fix it, instead of crashing or silently running with {}.
RAW_ARGUMENTS_KEY = "_raw_arguments"


def parse_tool_arguments(text: str) -> dict[str, Any]:
    """Arguments text -> dict; `{RAW_ARGUMENTS_KEY: text}` if it is not a JSON object."""
    import json

    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        value = _leading_object(text)
    if isinstance(value, str):  # arguments encoded twice: a JSON string of an object
        value = _leading_object(value)
    return value if is_json_object(value) else {RAW_ARGUMENTS_KEY: text}


def _leading_object(text: str) -> dict[str, object] | None:
    """The JSON object a model sent before trailing garbage (`{"a": 1}}`, `{...} done`,
    the same object twice), or None when the text does not start with one."""
    import json

    try:
        value, _end = json.JSONDecoder().raw_decode(text.strip())
    except ValueError:
        return None
    return value if is_json_object(value) else None


def invalid_arguments_text(call: ToolCall) -> str | None:
    """The raw text of a call whose arguments were not a JSON object, else None."""
    args = call.arguments_json
    if len(args) == 1 and isinstance(args.get(RAW_ARGUMENTS_KEY), str):
        return args[RAW_ARGUMENTS_KEY]
    return None
