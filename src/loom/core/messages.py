"""Message snapshots as they appear in a thread's conversation.

One model per role, joined into a discriminated union on `role`. Every model keeps
fields it does not know (`extra="allow"`) so a file written by a newer Loom, or by
hand, survives being rewritten. Optional fields that are unset are not written.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_serializer

from loom.core.extras import extra_field
from loom.core.images import ImageRef
from loom.core.text import TooDeep, clean_json, clean_text


class _Snapshot(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    @model_serializer(mode="wrap")
    def _drop_unset_optionals(self, handler: Any) -> dict[str, Any]:
        data = handler(self)
        return {key: value for key, value in data.items() if value is not None}


class ToolCall(_Snapshot):
    """A model's request to run one tool."""

    id: str
    tool_name: str
    arguments_json: dict[str, Any] = Field(default_factory=dict)


class Usage(_Snapshot):
    input_tokens: int = 0
    output_tokens: int = 0  # reasoning tokens included (they are billed as output)
    reasoning_tokens: int | None = None  # the part of output_tokens spent reasoning
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    cost_usd: float | None = None


class ReasoningPart(_Snapshot):
    """A piece of a model's reasoning, kept on its answer so it can be sent back as the
    provider asks (`loom.llm.reasoning_wire`). `text` is what a person may read (Claude's
    thinking, an OpenAI summary, a Gemini thought summary); `data` is opaque (Claude's
    redacted thinking, OpenAI's encrypted reasoning): kept, never shown, indexed or
    synced as text. Only the provider and model that wrote a part can read it back."""

    kind: Literal["thinking", "redacted_thinking", "reasoning", "thought"]
    provider: str  # "anthropic", "openai", "google"
    model: str = ""  # the model id that wrote it (without the provider prefix)
    text: str = ""
    signature: str | None = None  # Claude's signature over `text`
    data: str | None = None  # opaque: redacted thinking, encrypted_content
    id: str | None = None  # an OpenAI reasoning item's id
    # how many of the answer's tool calls came before it (Claude's interleaved thinking
    # between calls); None: before them all
    after_calls: int | None = None

    def readable_by(self, provider: str, model: str) -> bool:
        return self.provider == provider and self.model == model


class _MessageBase(_Snapshot):
    content: str = ""
    id: str | None = None
    created_at: str | None = None

    @model_serializer(mode="wrap")
    def _drop_unset_optionals(self, handler: Any) -> dict[str, Any]:
        data = handler(self)
        # `role` first so a file reads naturally; empty tool_calls lists are noise.
        ordered = {"role": data.pop("role")}
        for key, value in data.items():
            if value is not None and not (key == "tool_calls" and not value):
                ordered[key] = value
        return ordered


class Attachment(_Snapshot):
    """What came with a person's message without being their words: an @-mentioned
    file's content or a folder's listing, a UserPromptSubmit hook's added context. The
    model reads it after the message (`for_model`); titles and search never do."""

    kind: str  # "file" | "listing" | "hook"
    label: str  # "calc.py:1-1", "src/", "UserPromptSubmit hook": what a face shows
    text: str  # what the model reads


class UserMessage(_MessageBase):
    role: Literal["user"] = "user"
    images: list[ImageRef] | None = None  # attached images, by reference (core.images)
    attachments: list[Attachment] | None = None  # files, listings, hook context


def for_model(message: Any) -> Any:
    """The message as the model reads it: a user message's attachments joined after its
    words (as Loom sent them before attachments were kept apart); others unchanged."""
    attached = getattr(message, "attachments", None)
    if not isinstance(message, UserMessage) or not attached:
        return message
    text = message.content + "".join(f"\n\n{a.text}" for a in attached)
    return message.model_copy(update={"content": text, "attachments": None})


class SystemMessage(_MessageBase):
    role: Literal["system"] = "system"


class AssistantMessage(_MessageBase):
    role: Literal["assistant"] = "assistant"
    tool_calls: list[ToolCall] = Field(default_factory=list)
    # the model's reasoning for this answer, in the order it came (before the text)
    reasoning: list[ReasoningPart] | None = None
    model: str | None = None
    usage: Usage | None = None
    stop_reason: str | None = None
    mode: str | None = None


class ToolMessage(_MessageBase):
    role: Literal["tool"] = "tool"
    tool_call_id: str
    tool_name: str
    is_error: bool | None = None
    images: list[ImageRef] | None = None  # an image file the tool read (core.images)


Message = Annotated[
    UserMessage | AssistantMessage | ToolMessage | SystemMessage,
    Field(discriminator="role"),
]


def message_text(message: UserMessage | AssistantMessage | ToolMessage | SystemMessage) -> str:
    """The searchable text of a message: its content plus tool call arguments."""
    if isinstance(message, AssistantMessage) and message.tool_calls:
        import json

        calls = " ".join(
            f"{call.tool_name} {json.dumps(call.arguments_json, ensure_ascii=False)}"
            for call in message.tool_calls
        )
        return f"{message.content} {calls}".strip()
    return message.content


def clean_message(message: Any) -> None:
    """Repair, in place, text that could not be saved: lone surrogates in the content
    and tool-call arguments (half an emoji from a model or a tool), and arguments
    nested too deeply to write back (kept as a note the model is shown instead).

    `Thread.append` calls it, so every message entering a thread passes here; files
    read back need no check (the JSON parser refuses lone surrogates)."""
    content = getattr(message, "content", None)
    if isinstance(content, str):
        cleaned = clean_text(content)
        if cleaned is not content:
            message.content = cleaned
    for part in extra_field(message, "reasoning") or ():  # an answer's readable reasoning
        part.text = clean_text(part.text)
    for attached in extra_field(message, "attachments") or ():  # a file or a hook's words
        attached.text = clean_text(attached.text)
    for call in extra_field(message, "tool_calls") or ():  # none on a user message
        try:
            call.arguments_json = clean_json(call.arguments_json)
        except TooDeep as exc:  # `_raw_arguments`: the session tells the model what went wrong
            call.arguments_json = {"_raw_arguments": f"(arguments dropped: {exc})"}
