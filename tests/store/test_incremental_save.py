"""A save serialises only what changed, and still writes exactly the full serialisation.

The thread file must equal `thread.model_dump_json(indent=2)` after appends, after an
earlier message object is replaced (an amend, a merge), after the list shrinks, after a
thread-level change (a compaction record, a rewind's side branch) and after a resume.
Counts, not times: how many messages are encoded per save, how many buffers a save of
a long thread hands writev.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from tests.support.threads import make_thread

from loom.core.messages import AssistantMessage, ToolMessage, UserMessage
from loom.core.thread import Thread
from loom.store import atomic, serialize
from loom.store.local import LocalThreadStore
from loom.store.serialize import thread_to_bytes, thread_to_parts


@pytest.fixture
def store() -> LocalThreadStore:
    return LocalThreadStore()


@pytest.fixture
def encodes(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every message the serializer encodes, in order."""
    seen: list[Any] = []
    real = serialize._encode

    def counting(message: Any) -> bytes:
        seen.append(message)
        return real(message)

    monkeypatch.setattr(serialize, "_encode", counting)
    return seen


def _full(thread: Thread) -> bytes:
    return thread.model_dump_json(indent=2).encode()


def _on_disk(store: LocalThreadStore, thread: Thread) -> bytes:
    return store.path_for(thread.id).read_bytes()


def _add_turn(thread: Thread, n: int) -> None:
    thread.append(UserMessage(content=f"turn {n}: look it up", id=f"u{n}"))
    thread.append(AssistantMessage(content=f"answer {n} ünï", model="m"))
    thread.append(ToolMessage(tool_call_id=f"c{n}", tool_name="lookup", content="x\n" * n))


def test_saved_bytes_equal_the_full_serialisation_through_edits(store: LocalThreadStore) -> None:
    thread = make_thread(messages=5)
    for n in range(70):  # past three blocks of cached pieces
        _add_turn(thread, n)
        store.save(thread)
        assert _on_disk(store, thread) == _full(thread)
    messages = thread.conversation.messages
    # the last message still grows (streaming) and is amended by replacing its object
    messages[-1].content += " more"
    store.save(thread)
    assert _on_disk(store, thread) == _full(thread)
    # an earlier message object replaced: inside the first block, then inside a later one
    for index in (3, 130, len(messages) - 2):
        messages[index] = AssistantMessage(content=f"replaced {index}")
        store.save(thread)
        assert _on_disk(store, thread) == _full(thread)
    # the list shrinks (an undo that drops messages), then grows again
    del messages[100:]
    store.save(thread)
    assert _on_disk(store, thread) == _full(thread)
    _add_turn(thread, 99)
    store.save(thread)
    assert _on_disk(store, thread) == _full(thread)
    # thread-level changes around the cached messages: a compaction record, a title
    record = {"id": "compaction-1", "summary": "s", "first_kept_message_id": "u3"}
    setattr(thread, "compactions", [record])  # noqa: B010  (a field beyond the schema)
    thread.metadata.title = "renamed"
    thread.touch()
    store.save(thread)
    assert _on_disk(store, thread) == _full(thread)
    # resume: a loaded thread (new objects, empty cache) saves the same bytes, then appends
    loaded = store.load(thread.id)
    assert loaded is not None
    assert thread_to_bytes(loaded) == _full(loaded) == _on_disk(store, thread)
    _add_turn(loaded, 100)
    store.save(loaded)
    assert _on_disk(store, loaded) == _full(loaded)


def test_empty_and_one_message_threads(store: LocalThreadStore) -> None:
    thread = Thread.new()
    store.save(thread)
    assert _on_disk(store, thread) == _full(thread)
    thread.append(UserMessage(content="hi"))
    store.save(thread)
    assert _on_disk(store, thread) == _full(thread)


def test_a_save_encodes_only_the_new_messages_and_the_last(
    store: LocalThreadStore, encodes: list[Any]
) -> None:
    thread = make_thread(messages=1)
    store.save(thread)
    for n in range(200):
        _add_turn(thread, n)
        encodes.clear()
        store.save(thread)
        # three new messages; the one before them was the last (uncached) at the last save
        assert encodes == thread.messages[-4:]
    # replacing message 150 re-encodes from there on, plus the rest of its block
    thread.conversation.messages[150] = UserMessage(content="edited")
    encodes.clear()
    store.save(thread)
    assert len(encodes) == len(thread.messages) - 128
    assert _on_disk(store, thread) == _full(thread)


def test_a_long_thread_is_written_in_few_buffers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    thread = make_thread(messages=1)
    for n in range(700):  # 2,101 messages, as at turn 500 of the long-session bench
        _add_turn(thread, n)
        thread_to_parts(thread)
    parts = thread_to_parts(thread)
    assert len(parts) <= len(thread.messages) // 64 + 64 + 5
    buffers: list[int] = []
    real_writev = os.writev

    def counting_writev(fd: int, bufs: list[bytes]) -> int:
        buffers.append(len(bufs))
        return real_writev(fd, bufs)

    monkeypatch.setattr(atomic.os, "writev", counting_writev)
    target = tmp_path / "t.json"
    atomic.atomic_write_parts(target, parts)
    assert sum(buffers) == len([p for p in parts if p]) and len(buffers) == 1
    assert target.read_bytes() == _full(thread)
