"""The machine groups read-only calls into batches that run together, keeps everything
else in order, and stops a call that keeps failing (loom.core.loop_guard)."""

from __future__ import annotations

from loom.core import loop_guard
from loom.core.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from loom.core.state import (
    AgentAction,
    CallingLlm,
    EndTurn,
    ExecuteTool,
    ExecuteTools,
    LlmResponded,
    PostToolsHook,
    PostToolsHookDone,
    RecordMessage,
    ToolCompleted,
    ToolOutcome,
    ToolStarted,
    UserInput,
    WaitingForUserInput,
    transition,
)


def call(cid: str, name: str = "file_read", **args: object) -> ToolCall:
    return ToolCall(id=cid, tool_name=name, arguments_json=dict(args) or {"path": cid})


def executed(actions: list) -> list[tuple[str, ...]]:
    found = []
    for action in actions:
        if isinstance(action, ExecuteTool):
            found.append((action.call.id,))
        elif isinstance(action, ExecuteTools):
            found.append(tuple(c.id for c in action.calls))
    return found


def test_read_runs_batch_writes_alone_in_order() -> None:
    calls = [call("r1"), call("r2"), call("w1", "file_write"), call("r3"), call("r4")]
    state, _ = transition(WaitingForUserInput(), UserInput(UserMessage(content="go")))
    parallel = frozenset({"r1", "r2", "r3", "r4"})
    state, actions = transition(state, LlmResponded(AssistantMessage(tool_calls=calls), parallel))
    assert executed(actions) == [("r1", "r2")]
    seen = []
    for cid in ("r1", "r2"):
        state, _ = transition(state, ToolStarted(cid))
    state, actions = transition(state, ToolCompleted("r2", ToolOutcome("b")))
    assert executed(actions) == []  # r1 still running: nothing new starts
    state, actions = transition(state, ToolCompleted("r1", ToolOutcome("a")))
    seen += executed(actions)
    state, actions = transition(state, ToolCompleted("w1", ToolOutcome("ok")))
    seen += executed(actions)
    assert seen == [("w1",), ("r3", "r4")]


def test_fifth_failure_of_the_same_call_ends_the_turn() -> None:
    state: object = CallingLlm((UserMessage(content="go"),))
    actions: list[AgentAction] = []
    for attempt in range(1, loop_guard.STOP_AT + 1):
        bad = call(f"c{attempt}", path="missing.py")
        state, _ = transition(state, LlmResponded(AssistantMessage(tool_calls=[bad])))
        state, actions = transition(state, ToolCompleted(bad.id, ToolOutcome("no", True)))
        record = actions[0]
        assert isinstance(record, RecordMessage)
        result = record.message.content
        assert ("Change approach" in result) == (attempt >= loop_guard.WARN_AT)
        if attempt < loop_guard.STOP_AT:
            assert not isinstance(state, WaitingForUserInput)
            assert isinstance(state, PostToolsHook)
            state, _ = transition(state, PostToolsHookDone())
    assert isinstance(state, WaitingForUserInput)
    end = next(a for a in actions if isinstance(a, EndTurn))
    assert end.error is not None and "5 times in a row" in end.error.message


def test_a_success_resets_the_streak() -> None:
    convo = [UserMessage(content="go")]
    same = {"path": "x"}
    for index, failed in enumerate([True, True, False, True]):
        c = ToolCall(id=f"c{index}", tool_name="file_read", arguments_json=same)
        convo += [AssistantMessage(tool_calls=[c]),
                  ToolMessage(tool_call_id=c.id, tool_name="file_read", content="r",
                              is_error=failed or None)]  # fmt: skip
    probe = ToolCall(id="p", tool_name="file_read", arguments_json=same)
    assert loop_guard.failure_streak(convo, probe) == 1
