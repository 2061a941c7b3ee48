from __future__ import annotations

import json

from loom.core.ids import is_thread_id, new_thread_id
from loom.core.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from loom.core.thread import AgentStateKind, Thread, ThreadVisibility


def test_ids_are_prefixed_uuidv7_and_time_ordered() -> None:
    ids = [new_thread_id() for _ in range(50)]
    assert all(is_thread_id(i) for i in ids)
    assert ids == sorted(ids)
    assert not is_thread_id("T-not-a-uuid")


def test_touch_bumps_version_and_timestamps() -> None:
    thread = Thread.new(workspace_root="/p")
    before = thread.updated_at
    thread.touch()
    thread.touch()
    assert thread.version == 2
    assert thread.updated_at >= before
    assert thread.last_activity_at == thread.updated_at


def test_round_trip_keeps_unknown_fields() -> None:
    thread = Thread.new()
    thread.append(UserMessage(content="Add error handling to login"))
    thread.append(
        AssistantMessage(
            content="reading",
            tool_calls=[ToolCall(id="c1", tool_name="file_read", arguments_json={"path": "a"})],
        )
    )
    thread.append(ToolMessage(tool_call_id="c1", tool_name="file_read", content="x"))
    data = json.loads(thread.to_json())
    data["from_the_future"] = {"a": 1}
    data["conversation"]["messages"][0]["reaction"] = "+1"
    data["metadata"]["color"] = "blue"
    again = json.loads(Thread.model_validate(data).to_json())
    assert again["from_the_future"] == {"a": 1}
    assert again["conversation"]["messages"][0]["reaction"] == "+1"
    assert again["metadata"]["color"] == "blue"
    assert again["metadata"]["title"] == "Add error handling to login"


def test_private_thread_defaults() -> None:
    thread = Thread.new(is_private=True)
    assert thread.visibility is ThreadVisibility.PRIVATE
    assert thread.agent_state.kind is AgentStateKind.WAITING_FOR_USER_INPUT
