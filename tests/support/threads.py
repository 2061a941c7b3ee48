"""Threads built in memory, for tests that store, sync or show them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Protocol

from loom.core.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from loom.core.thread import Thread


class ThreadLoader(Protocol):
    def load(self, thread_id: str) -> Thread | None: ...


def make_thread(title: str = "Add error handling to login", messages: int = 3, **fields) -> Thread:
    thread = Thread.new(workspace_root="/home/ana/proj")
    for name, value in fields.items():
        setattr(thread, name, value)
    thread.append(UserMessage(content=title))
    for i in range(1, messages):
        if i % 2:
            thread.append(
                AssistantMessage(
                    content=f"step {i}: reading the module",
                    tool_calls=[
                        ToolCall(id=f"c{i}", tool_name="file_read", arguments_json={"path": "a.py"})
                    ],
                )
            )
        else:
            thread.append(ToolMessage(tool_call_id=f"c{i - 1}", tool_name="file_read", content="x"))
    thread.touch()
    return thread


def thread_with(*texts: str, **fields: object) -> Thread:
    """A new thread whose messages are `texts`, alternately the user's and the assistant's."""
    thread = Thread.model_validate({**Thread.new().model_dump(), **fields})
    for i, text in enumerate(texts):
        message = UserMessage(content=text) if i % 2 == 0 else AssistantMessage(content=text)
        thread.append(message)
    thread.touch()
    return thread


def thread_file(thread_id: str) -> dict:
    """The saved thread `thread_id` of this test's LOOM_HOME, as JSON."""
    path = next(Path(os.environ["LOOM_HOME"]).rglob(f"{thread_id}.json"))
    return json.loads(path.read_text())


def plant_thread(**raw_fields: object) -> str:
    """A saved thread of this test's LOOM_HOME whose file then gets `raw_fields` written
    straight into its JSON (as a sandboxed command or a hand edit could); its id."""
    from loom.paths import LoomPaths
    from loom.store.local import LocalThreadStore

    store = LocalThreadStore(LoomPaths.from_env())
    thread = make_thread("planted thread")
    store.save(thread)
    store.close()
    path = store.path_for(thread.id)
    data = json.loads(path.read_text())
    data.update(raw_fields)
    path.write_text(json.dumps(data, indent=2))
    return thread.id


def save_big_message_thread(workspace: Path, size: int = 50_000_000) -> str:
    """A saved thread (openai:gpt-4o) whose first message is one `size`-byte paste (a hex
    dump: no dot, no `+`, the shape scans choked on) and a short answer; its id."""
    from loom.store.local import LocalThreadStore

    thread = Thread.new(workspace_root=str(workspace))
    thread.provider, thread.model = "openai", "gpt-4o"
    thread.append(UserMessage(content="look at this\n\n" + os.urandom(size // 2).hex()))
    thread.append(AssistantMessage(content="It is a hex dump."))
    thread.touch()
    store = LocalThreadStore()
    store.save(thread)
    store.close()
    return thread.id


def stored(store: ThreadLoader, thread_id: str) -> Thread:
    """The thread `store` holds under `thread_id`; fails the test when it holds none."""
    thread = store.load(thread_id)
    assert thread is not None, f"no thread {thread_id} in the store"
    return thread
