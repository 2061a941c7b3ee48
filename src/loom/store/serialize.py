"""Thread -> file bytes, fast enough that saving a big thread costs little more than I/O.

The bytes equal `thread.model_dump_json(indent=2)` (a test holds us to that), but are
built with orjson from pieces: the document around the message list, and one piece
per message. History is append-only: a message never changes once another message
follows it, so its piece (with the `,\n` that follows it) is cached on the thread and
only the last message and new ones are serialized on each save; cached pieces are
joined in blocks of 64 messages, so the list handed to writev stays short. The cache
is checked by message object identity, so replacing a message object (a merge, a
reload) is picked up and only the pieces from it on are rebuilt. `thread_to_parts`
feeds `atomic_write_parts` (writev: no 3 MB join).
"""

from __future__ import annotations

from operator import is_
from typing import Any

import orjson

from loom.core.thread import Thread

_SENTINEL = "\x00loom-messages\x00"
_SENTINEL_JSON = orjson.dumps(_SENTINEL)
_ITEM_INDENT = b"      "  # messages sit three levels deep: {conversation: {messages: [
_SEPARATOR = b",\n"
# Cached pieces are joined in blocks of this many messages, so a save of 2,000 messages
# hands the kernel ~32 buffers instead of 2,000 (walking these in Python grew with the
# thread: the save's one cost that did).
_BLOCK = 64


def thread_to_bytes(thread: Thread) -> bytes:
    return b"".join(thread_to_parts(thread))


def thread_to_parts(thread: Thread) -> list[bytes]:
    """Pieces whose concatenation is the thread file."""
    head = thread.model_dump(mode="json", exclude={"conversation": {"messages"}})
    conversation = head.get("conversation", {})
    head["conversation"] = {"messages": _SENTINEL, **conversation}
    document = _dumps(head)
    before, _, after = document.partition(_SENTINEL_JSON)
    messages = thread.conversation.messages
    if not messages:
        return [before, b"[]", after]
    return [before, b"[\n", *_message_parts(thread, messages), b"\n    ]", after]


def _message_parts(thread: Thread, messages: list[Any]) -> list[bytes]:
    cache = thread.serialization_cache
    objs: list[Any] = cache.setdefault("objs", [])  # the messages whose pieces are cached
    blocks: list[bytes] = cache.setdefault("blocks", [])  # objs[i*_BLOCK:(i+1)*_BLOCK], joined
    tail: list[bytes] = cache.setdefault("tail", [])  # one piece per message after the blocks
    last = len(messages) - 1
    valid = min(len(objs), last)  # the last message may still change: never cached
    if not all(map(is_, objs[:valid], messages[:valid])):
        valid = next(i for i in range(valid) if objs[i] is not messages[i])
    if valid < len(objs):
        _forget_from(valid, objs, blocks, tail)
    for message in messages[valid:last]:
        objs.append(message)
        tail.append(_encode(message) + _SEPARATOR)
        if len(tail) == _BLOCK:
            blocks.append(b"".join(tail))
            tail.clear()
    return [*blocks, *tail, _encode(messages[last])]


def _forget_from(valid: int, objs: list[Any], blocks: list[bytes], tail: list[bytes]) -> None:
    """Drop the cached pieces of objs[valid:] (a message object was replaced). A block
    that held some still-valid messages is split back into pieces by re-encoding them."""
    kept = valid // _BLOCK
    if kept < len(blocks):
        del blocks[kept:]
        tail[:] = [_encode(m) + _SEPARATOR for m in objs[kept * _BLOCK : valid]]
    else:
        del tail[valid - kept * _BLOCK :]
    del objs[valid:]


def _encode(message: Any) -> bytes:
    data = _dumps(message.model_dump(mode="json"))
    return _ITEM_INDENT + data.replace(b"\n", b"\n" + _ITEM_INDENT)


def _dumps(value: Any) -> bytes:
    """orjson, or (for what it refuses: text with a lone surrogate that got past the
    message models, nesting past 255 levels) the standard library with the text
    repaired, so that a save never fails for the content it holds."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except orjson.JSONEncodeError:
        import json

        from loom.core.text import clean_text

        text = json.dumps(value, indent=2, ensure_ascii=False)
        return clean_text(text).encode()
