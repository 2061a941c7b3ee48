"""Small builders shared by the store tests."""

from __future__ import annotations

from loom.core.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from loom.core.thread import Thread


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
