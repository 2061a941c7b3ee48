"""Build threads for tests."""

from __future__ import annotations

from loom.core.messages import AssistantMessage, UserMessage
from loom.core.thread import Thread


def make_thread(*texts: str, **fields: object) -> Thread:
    thread = Thread.model_validate({**Thread.new().model_dump(), **fields})
    for i, text in enumerate(texts):
        message = UserMessage(content=text) if i % 2 == 0 else AssistantMessage(content=text)
        thread.append(message)
    thread.touch()
    return thread


def body(thread: Thread) -> bytes:
    return thread.model_dump_json().encode()


JSON = {"Content-Type": "application/json"}
