"""Reasoning kept on an answer: saved and read back unchanged, never indexed, never in
the text a search (or the sync server's search) reads."""

from __future__ import annotations

import json

from loom.core.messages import AssistantMessage, ReasoningPart, UserMessage, message_text
from loom.core.thread import Thread
from loom.store.local import LocalThreadStore

PARTS = [
    ReasoningPart(
        kind="thinking",
        provider="anthropic",
        model="claude-sonnet-4-5",
        text="weigh zebracorn options",
        signature="sig_abc",
    ),
    ReasoningPart(
        kind="redacted_thinking",
        provider="anthropic",
        model="claude-sonnet-4-5",
        data="redacted_quokkablob",
    ),
    ReasoningPart(
        kind="reasoning", provider="openai", model="gpt-5", id="rs_1", data="gAAAAencryptedwombat"
    ),
]


def test_reasoning_parts_round_trip_and_stay_out_of_the_index() -> None:
    store = LocalThreadStore()
    thread = Thread.new(workspace_root="/tmp/project")
    thread.append(UserMessage(content="which option?"))
    thread.append(AssistantMessage(content="Option A.", reasoning=PARTS, model="anthropic:x"))
    store.save(thread)

    saved = json.loads(store.path_for(thread.id).read_text())
    answer = saved["conversation"]["messages"][1]
    assert answer["reasoning"][0] == {
        "kind": "thinking",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "text": "weigh zebracorn options",
        "signature": "sig_abc",
    }
    loaded = store.load(thread.id)
    assert loaded.messages[1].reasoning == PARTS  # type: ignore[union-attr]
    assert "zebracorn" not in message_text(loaded.messages[1])  # type: ignore[arg-type]
    for word in ("zebracorn", "quokkablob", "encryptedwombat"):
        assert store.search(word) == [], word
    assert store.search("option")[0].summary.id == thread.id
