"""The three `loom run` output formats, fed the session's own events."""

from __future__ import annotations

import io
import json

from loom.cli.run.output import RunResult, RunTally, make_writer
from loom.core.events import (
    LlmRetry,
    NewMessage,
    PermissionRequest,
    SessionEvent,
    TextDeltaEvent,
    ToolComplete,
    ToolExecuting,
    TurnComplete,
)
from loom.core.messages import AssistantMessage, ToolCall, ToolMessage, Usage, UserMessage

SID = "T-session"


def conversation() -> list[SessionEvent]:
    call = ToolCall(id="call_1", tool_name="file_read", arguments_json={"path": "a.py"})
    return [
        NewMessage(session_id=SID, message=UserMessage(content="fix a.py")),
        TextDeltaEvent(session_id=SID, text="Reading"),
        NewMessage(
            session_id=SID,
            message=AssistantMessage(
                content="Reading it.",
                tool_calls=[call],
                model="m",
                stop_reason="tool_use",
                usage=Usage(input_tokens=10, output_tokens=5, cost_usd=0.001),
            ),
        ),
        ToolExecuting(session_id=SID, tool_name="file_read", call_id="call_1"),
        ToolComplete(session_id=SID, tool_name="file_read", call_id="call_1", result="1\tx"),
        NewMessage(
            session_id=SID,
            message=ToolMessage(content="1\tx", tool_call_id="call_1", tool_name="file_read"),
        ),
        LlmRetry(session_id=SID, attempt=1, delay_seconds=0.5, error="529 overloaded"),
        NewMessage(
            session_id=SID,
            message=AssistantMessage(
                content="Done.",
                model="m",
                stop_reason="end_turn",
                usage=Usage(input_tokens=20, output_tokens=7, cache_read_tokens=3, cost_usd=0.002),
            ),
        ),
        TurnComplete(session_id=SID, text="Done."),
    ]


def run(output_format: str, partial: bool = False) -> str:
    out = io.StringIO()
    writer = make_writer(output_format, out, partial_messages=partial)
    tally = RunTally()
    writer.start({"session_id": SID, "tools": ["file_read"], "model": "p:m", "cwd": "/x"})
    for event in conversation():
        tally.observe(event)
        writer.event(event)
    writer.finish(RunResult("success", tally.last_text, SID, SID, 42, tally))
    return out.getvalue()


def test_text_prints_only_the_final_answer() -> None:
    assert run("text") == "Done.\n"


def test_json_prints_one_claude_shaped_result() -> None:
    (line,) = run("json").splitlines()
    result = json.loads(line)
    assert result["type"] == "result" and result["subtype"] == "success"
    assert result["is_error"] is False and result["result"] == "Done."
    assert result["num_turns"] == 2 and result["duration_ms"] == 42
    assert result["total_cost_usd"] == 0.003
    assert result["usage"] == {
        "input_tokens": 30,
        "output_tokens": 12,
        "cache_read_input_tokens": 3,
        "cache_creation_input_tokens": 0,
    }


def test_stream_json_lines_in_claude_code_shape() -> None:
    lines = [json.loads(line) for line in run("stream-json").splitlines()]
    kinds = [(line["type"], line.get("subtype")) for line in lines]
    assert kinds == [
        ("system", "init"),
        ("user", None),
        ("assistant", None),
        ("loom.tool_executing", None),
        ("loom.tool_complete", None),
        ("user", None),
        ("system", "api_retry"),
        ("assistant", None),
        ("result", "success"),
    ]
    assert lines[0]["tools"] == ["file_read"] and lines[0]["cwd"] == "/x"
    assistant = lines[2]["message"]
    assert assistant["role"] == "assistant" and lines[2]["session_id"] == SID
    assert assistant["content"] == [
        {"type": "text", "text": "Reading it."},
        {"type": "tool_use", "id": "call_1", "name": "file_read", "input": {"path": "a.py"}},
    ]
    assert lines[5]["message"]["content"] == [
        {"type": "tool_result", "tool_use_id": "call_1", "content": "1\tx", "is_error": False}
    ]
    assert lines[6]["retry_delay_ms"] == 500
    # the prompt cache's part of each call, named as Claude Code names it
    assert lines[7]["message"]["usage"] == {
        "input_tokens": 20,
        "cache_read_input_tokens": 3,
        "cache_creation_input_tokens": 0,
        "output_tokens": 7,
    }


def test_stream_json_partial_messages_are_opt_in() -> None:
    lines = [json.loads(line) for line in run("stream-json", partial=True).splitlines()]
    deltas = [line for line in lines if line["type"] == "stream_event"]
    assert deltas[0]["event"]["delta"] == {"type": "text_delta", "text": "Reading"}


def test_permission_denials_are_reported() -> None:
    tally = RunTally()
    tally.denied(
        PermissionRequest(
            session_id=SID, tool_name="shell", call_id="c", arguments={"command": "rm x"}
        )
    )
    data = RunResult("error_during_execution", "", SID, SID, 1, tally, error="boom").to_dict()
    assert data["is_error"] is True and data["error"] == "boom"
    assert data["permission_denials"] == [
        {"tool_name": "shell", "tool_use_id": "c", "tool_input": {"command": "rm x"}}
    ]
