"""Gemini adapter over the official `google-genai` SDK (imported lazily).

Gemini sends each function call whole (no argument fragments) and may omit call ids;
we give those calls ids so results can be paired. Gemini 3 attaches a
`thought_signature` to function-call parts that must be sent back with the history;
it is kept on the ToolCall (base64, an extra field the thread file preserves).

Requests go out as JSON bytes with the URL and headers the SDK's request layer built
(`loom.llm._gemini_post`); the streamed events are read as the plain JSON the REST API
documents.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

from loom.core.jsonish import is_json_object
from loom.core.messages import (
    AssistantMessage,
    Message,
    ReasoningPart,
    ToolCall,
    ToolMessage,
    Usage,
)
from loom.llm._convert import normalize_stop_reason, system_text
from loom.llm._errors import sdk_stream, unreadable
from loom.llm._events import count, obj, objs, text
from loom.llm._gemini_post import GeminiPost
from loom.llm._images import gemini_part, images_of
from loom.llm._wire import Unit, WireHistory, body, dumps
from loom.llm.base import (
    LlmRequest,
    ReasoningReady,
    StreamEnd,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallReady,
    UsageReport,
    parse_tool_arguments,
)
from loom.llm.catalog import model_info
from loom.llm.clients import client_key, shared_client
from loom.llm.effort import gemini_thinking
from loom.llm.guard import guarded_async_client

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/"


def gemini_units(message: Message) -> list[Unit]:
    """One message as Gemini `parts` (REST field names), tool results in the next user
    turn (encoded once: `loom.llm._wire`)."""
    if isinstance(message, ToolMessage):
        key = "error" if message.is_error else "result"
        response = {
            "id": message.tool_call_id,
            "name": message.tool_name,
            "response": {key: message.content},
        }
        parts: list[Unit] = [("user", dumps({"functionResponse": response}))]
        return parts + [("user", dumps(gemini_part(ref))) for ref in images_of(message)]
    if isinstance(message, AssistantMessage):
        units: list[Unit] = [("model", dumps({"text": message.content}))] if message.content else []
        for call in message.tool_calls:
            part: dict[str, Any] = {
                "functionCall": {"id": call.id, "name": call.tool_name, "args": call.arguments_json}
            }
            signature = getattr(call, "thought_signature", None)
            if isinstance(signature, str):
                part["thoughtSignature"] = signature  # base64, as the API sent it
            units.append(("model", dumps(part)))
        return units
    units = [("user", dumps(gemini_part(ref))) for ref in images_of(message)]
    if message.content:
        units.append(("user", dumps({"text": message.content})))
    return units


def _content(role: str, parts: list[bytes]) -> bytes:
    return b'{"role":"%s","parts":[%s]}' % (role.encode(), b",".join(parts))


class GoogleProvider:
    name = "google"

    def __init__(
        self, *, api_key: str | None, base_url: str | None = None, timeout: float = 600.0
    ) -> None:
        def build() -> Any:
            from google import genai
            from google.genai import types

            options = types.HttpOptions(
                base_url=base_url,
                timeout=int(timeout * 1000),
                retry_options=None,
                httpx_async_client=guarded_async_client(timeout),
            )
            return genai.Client(api_key=api_key, http_options=options)

        self.endpoint = base_url or DEFAULT_BASE_URL
        self._client = shared_client(client_key(self.name, base_url, api_key, timeout), build)
        self.history = WireHistory(self.name, gemini_units, _content)
        self._post = GeminiPost(self._client)

    def request_body(self, request: LlmRequest) -> bytes:
        """The JSON body of a streamGenerateContent request."""
        after = [("user", dumps({"text": request.context}))] if request.context else ()
        wire, system_texts = self.history.encode(request.messages, after=after)
        config: dict[str, Any] = {"maxOutputTokens": request.max_tokens}
        if request.temperature is not None:
            config["temperature"] = request.temperature
        thinking = gemini_thinking(model_info(self.name, request.model), request.effort)
        if thinking is not None:  # a budget or a level by family, thought summaries shown
            config["thinkingConfig"] = thinking
        head: dict[str, Any] = {"generationConfig": config}
        system = system_text(request.system, system_texts)
        if system:
            head["systemInstruction"] = {"parts": [{"text": system}], "role": "user"}
        if request.tools:
            declarations = [
                {"name": t.name, "description": t.description, "parametersJsonSchema": t.parameters}
                for t in request.tools
            ]
            head["tools"] = [{"functionDeclarations": declarations}]
        return body(head, "contents", wire)

    def stream(self, request: LlmRequest) -> AsyncIterator[StreamEvent]:
        async def open_stream() -> Any:
            # The body as bytes: `generate_content_stream` would validate and convert
            # the whole history again on every call.
            path = f"{_model_path(request.model)}:streamGenerateContent?alt=sse"
            return await self._post.chunks(path, self.request_body(request))

        async def consume(chunks: Any) -> AsyncIterator[StreamEvent]:
            async for event in self._consume(chunks, request.model):
                yield event

        return sdk_stream(
            open_stream,
            consume,
            provider=self.name,
            endpoint=self.endpoint,
            key_hint="GEMINI_API_KEY or GOOGLE_API_KEY",
        )

    async def _consume(self, chunks: Any, model: str = "") -> AsyncIterator[StreamEvent]:
        usage = Usage()
        thoughts: list[str] = []  # thought summaries, shown; kept on the answer, not sent back
        calls = 0
        finish: str | None = None
        seen_candidate = False
        async for chunk in chunks:
            if not is_json_object(chunk):
                raise unreadable(
                    self.name,
                    "a stream event that is not a JSON object",
                    self.endpoint,
                    transient=False,
                )
            if is_json_object(metadata := chunk.get("usageMetadata")):
                _set_usage(usage, metadata)
            for candidate in objs(chunk.get("candidates")):
                seen_candidate = True
                finish = text(candidate.get("finishReason")) or finish
                for part in objs(obj(candidate.get("content")).get("parts")):
                    if text(part.get("text")) and part.get("thought"):
                        thoughts.append(part["text"])
                        yield ThinkingDelta(part["text"])
                    elif text(part.get("text")):
                        yield TextDelta(part["text"])
                    elif isinstance(part.get("functionCall"), dict):
                        calls += 1
                        yield ToolCallReady(_tool_call(part))
        if not seen_candidate:
            raise unreadable(
                self.name, "no candidates in the response", self.endpoint, transient=False
            )
        if thoughts:
            summary = "".join(thoughts)
            yield ReasoningReady(
                ReasoningPart(kind="thought", provider=self.name, model=model, text=summary)
            )
        yield UsageReport(usage)
        yield StreamEnd(normalize_stop_reason(finish, has_tool_calls=calls > 0))


def _model_path(model: str) -> str:
    if not model or any(bad in model for bad in ("..", "?", "&", "#")):
        raise ValueError(f"invalid Gemini model id {model!r}")
    return model if model.startswith(("models/", "tunedModels/")) else f"models/{model}"


def _tool_call(part: dict[str, Any]) -> ToolCall:
    function_call = part["functionCall"]
    extra: dict[str, Any] = {}
    signature = part.get("thoughtSignature")
    if isinstance(signature, str) and signature:
        extra["thought_signature"] = signature
    args: object = function_call.get("args")
    if args is None:
        args = {}
    elif not is_json_object(args):
        args = parse_tool_arguments(json.dumps(args))
    return ToolCall(
        id=str(function_call.get("id") or f"call_{uuid.uuid4().hex[:24]}"),
        tool_name=str(function_call.get("name") or ""),
        arguments_json=args,
        **extra,
    )


def _set_usage(usage: Usage, reported: dict[str, Any]) -> None:
    """Gemini counts cached tokens inside the prompt count and thinking apart from output."""
    cached = count(reported.get("cachedContentTokenCount"))
    usage.input_tokens = max(0, count(reported.get("promptTokenCount")) - cached)
    thoughts = count(reported.get("thoughtsTokenCount"))
    usage.output_tokens = count(reported.get("candidatesTokenCount")) + thoughts
    usage.cache_read_tokens = cached or None
    usage.reasoning_tokens = thoughts or None
