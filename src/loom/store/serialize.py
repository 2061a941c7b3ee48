"""Thread -> file bytes, fast enough that saving a big thread costs little more than I/O.

The bytes equal `thread.model_dump_json(indent=2)` (a test holds us to that), but are
built with orjson and a per-thread cache of each message's JSON. History is
append-only: a message never changes once another message follows it, so only the
last message and new ones are serialized on each save. The cache is keyed by message
object identity, so replacing a message object (a merge, a reload) is picked up.
"""

from __future__ import annotations

from typing import Any

import orjson

from loom.core.thread import Thread

_SENTINEL = "\x00loom-messages\x00"
_SENTINEL_JSON = orjson.dumps(_SENTINEL)
_ITEM_INDENT = b"      "  # messages sit three levels deep: {conversation: {messages: [


def thread_to_bytes(thread: Thread) -> bytes:
    head = thread.model_dump(mode="json", exclude={"conversation": {"messages"}})
    conversation = head.get("conversation", {})
    head["conversation"] = {"messages": _SENTINEL, **conversation}
    document = orjson.dumps(head, option=orjson.OPT_INDENT_2)
    return document.replace(_SENTINEL_JSON, _messages_json(thread), 1)


def _messages_json(thread: Thread) -> bytes:
    messages = thread.conversation.messages
    if not messages:
        return b"[]"
    cache: list[tuple[Any, bytes]] = thread.serialization_cache
    last = len(messages) - 1
    del cache[last:]  # the last message may still change (streaming): never cached
    parts = []
    for i, message in enumerate(messages):
        if i < len(cache) and cache[i][0] is message:
            parts.append(cache[i][1])
            continue
        part = _ITEM_INDENT + orjson.dumps(
            message.model_dump(mode="json"), option=orjson.OPT_INDENT_2
        ).replace(b"\n", b"\n" + _ITEM_INDENT)
        parts.append(part)
        if i < last:
            del cache[i:]
            cache.append((message, part))
    return b"[\n" + b",\n".join(parts) + b"\n    ]"
