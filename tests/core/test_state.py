"""The agent state machine: transitions, tool lifecycle, retries, interrupts, resume."""

from __future__ import annotations

from loom.core.messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from loom.core.state import (
    INTERRUPTED_RESULT,
    CallingLlm,
    CallLlm,
    Completed,
    EndTurn,
    Error,
    ErrorOrigin,
    ExecuteTool,
    ExecutingTools,
    Ignored,
    Interrupted,
    LlmFailed,
    LlmResponded,
    LlmStreamStarted,
    MachineConfig,
    PermissionDenied,
    PostToolsHook,
    PostToolsHookDone,
    ProcessingLlmResponse,
    PublishProgress,
    RecordMessage,
    Resume,
    RetryTimerFired,
    Running,
    RunPostToolsHook,
    SaveThread,
    ScheduleRetry,
    Shutdown,
    ShuttingDown,
    ToolCompleted,
    ToolOutcome,
    ToolProgressed,
    ToolProgressInfo,
    ToolStarted,
    UserInput,
    WaitingForUserInput,
    restore,
    snapshot,
    status_of,
    transition,
)
from loom.core.thread import AgentStateKind


def call(cid: str, name: str = "file_read") -> ToolCall:
    return ToolCall(id=cid, tool_name=name, arguments_json={"path": f"{cid}.py"})


def with_calls(*ids: str, text: str = "") -> AssistantMessage:
    return AssistantMessage(content=text, tool_calls=[call(i) for i in ids])


def tool_message(message: Message) -> ToolMessage:
    assert isinstance(message, ToolMessage), message
    return message


def user(text: str = "hi") -> UserInput:
    return UserInput(UserMessage(content=text))


def run(state, *events, config=MachineConfig()):
    actions = []
    for event in events:
        state, step = transition(state, event, config)
        actions.extend(step)
    return state, actions


def test_user_input_records_saves_and_calls_the_model() -> None:
    state, actions = transition(WaitingForUserInput(), user("fix login"))
    assert isinstance(state, CallingLlm)
    assert [m.content for m in state.conversation] == ["fix login"]
    assert isinstance(actions[0], RecordMessage) and actions[0].message.content == "fix login"
    assert isinstance(actions[1], SaveThread)
    assert isinstance(actions[2], CallLlm) and actions[2].conversation == state.conversation
    assert status_of(state) == "thinking"


def test_text_answer_ends_the_turn() -> None:
    state, actions = run(
        WaitingForUserInput(),
        user(),
        LlmStreamStarted(),
        LlmResponded(AssistantMessage(content="hello")),
    )
    assert isinstance(state, WaitingForUserInput)
    assert [m.role for m in state.conversation] == ["user", "assistant"]
    ends = [a for a in actions if isinstance(a, EndTurn)]
    assert ends == [EndTurn("hello")]
    assert status_of(state) == "idle"


def test_tools_run_one_at_a_time_pending_running_completed() -> None:
    state, actions = run(WaitingForUserInput(), user(), LlmResponded(with_calls("a", "b")))
    assert isinstance(state, ExecutingTools)
    assert [type(e).__name__ for e in state.executions] == ["Pending", "Pending"]
    assert actions[-1] == ExecuteTool(call("a"))
    assert status_of(state) == "executing_tool"

    state, _ = transition(state, ToolStarted("a", at=1.0))
    assert isinstance(state, ExecutingTools) and isinstance(state.executions[0], Running)
    state, step = transition(state, ToolProgressed("a", ToolProgressInfo(0.5, "half"), at=2.0))
    assert isinstance(state, ExecutingTools)  # progress is not a state change
    running = state.executions[0]
    assert isinstance(running, Running) and running.progress == ToolProgressInfo(0.5, "half")
    assert step == [PublishProgress(call("a"), ToolProgressInfo(0.5, "half"))]

    state, step = transition(state, ToolCompleted("a", ToolOutcome("A"), at=3.0))
    assert isinstance(state, ExecutingTools)
    done = state.executions[0]
    assert isinstance(done, Completed) and (done.started_at, done.completed_at) == (1.0, 3.0)
    assert step[-1] == ExecuteTool(call("b"))
    assert state.conversation[-1] == ToolMessage(
        tool_call_id="a", tool_name="file_read", content="A"
    )

    state, step = run(state, ToolStarted("b"), ToolCompleted("b", ToolOutcome("B", is_error=True)))
    assert isinstance(state, PostToolsHook)
    assert [c.call.id for c in state.completed_tools] == ["a", "b"]
    assert tool_message(state.conversation[-1]).is_error is True
    assert isinstance(step[-1], RunPostToolsHook)

    state, step = transition(state, PostToolsHookDone())
    assert isinstance(state, CallingLlm) and step == [CallLlm(state.conversation)]


def test_permission_denied_answers_the_call_with_an_error() -> None:
    state, _ = run(WaitingForUserInput(), user(), LlmResponded(with_calls("a")))
    state, _ = transition(state, PermissionDenied("a", subject="a.py"))
    assert isinstance(state, PostToolsHook)
    result = tool_message(state.conversation[-1])
    assert result.tool_call_id == "a" and result.is_error
    assert "Permission denied" in result.content and "a.py" in result.content


def test_transient_failures_retry_up_to_the_limit_then_end_the_turn() -> None:
    config = MachineConfig(max_retries=2)
    state, _ = run(WaitingForUserInput(), user(), config=config)
    state, step = transition(state, LlmFailed("overloaded", transient=True), config)
    assert isinstance(state, Error) and state.retries == 1 and state.origin is ErrorOrigin.LLM
    assert step == [ScheduleRetry(1, state.error)]
    assert status_of(state) == "thinking"
    state, step = transition(state, RetryTimerFired(), config)
    assert isinstance(state, CallingLlm) and state.retries == 1
    assert step == [CallLlm(state.conversation, attempt=1)]
    state, _ = run(state, LlmFailed("x", True), RetryTimerFired(), config=config)
    state, step = transition(state, LlmFailed("still overloaded", True), config)
    assert isinstance(state, Error) and not state.error.transient
    assert any(isinstance(a, EndTurn) and a.error is not None for a in step)
    # a stray timer after giving up does nothing
    assert transition(state, RetryTimerFired(), config)[1][0].__class__ is Ignored
    # the user can carry on from the error
    state, _ = transition(state, user("try again"), config)
    assert isinstance(state, CallingLlm) and state.retries == 0


def test_permanent_failure_does_not_retry() -> None:
    state, _ = run(WaitingForUserInput(), user())
    state, step = transition(state, LlmFailed("401 bad key", transient=False))
    assert isinstance(state, Error)
    assert not any(isinstance(a, ScheduleRetry) for a in step)
    assert snapshot(state).last_error == "401 bad key"


def test_interrupt_mid_tool_answers_unfinished_calls() -> None:
    state, _ = run(
        WaitingForUserInput(),
        user(),
        LlmResponded(with_calls("a", "b", "c")),
        ToolStarted("a"),
        ToolCompleted("a", ToolOutcome("A")),
        ToolStarted("b"),
    )
    state, step = transition(state, Interrupted())
    assert isinstance(state, WaitingForUserInput)
    results = [m for m in state.conversation if m.role == "tool"]
    assert [(m.tool_call_id, m.content == INTERRUPTED_RESULT) for m in results] == [
        ("a", False),
        ("b", True),
        ("c", True),
    ]
    assert any(isinstance(a, EndTurn) and a.interrupted for a in step)
    assert any(isinstance(a, SaveThread) for a in step)


def test_interrupt_while_streaming_keeps_the_conversation() -> None:
    state, _ = run(WaitingForUserInput(), user("q"), LlmStreamStarted())
    assert isinstance(state, ProcessingLlmResponse)
    state, _ = transition(state, Interrupted())
    assert isinstance(state, WaitingForUserInput) and [m.content for m in state.conversation] == [
        "q"
    ]


def test_round_limit_answers_calls_and_stops() -> None:
    config = MachineConfig(max_tool_rounds=1)
    state, _ = run(
        WaitingForUserInput(),
        user(),
        LlmResponded(with_calls("a")),
        ToolCompleted("a", ToolOutcome("A")),
        PostToolsHookDone(),
        config=config,
    )
    state, step = transition(state, LlmResponded(with_calls("b")), config)
    assert isinstance(state, WaitingForUserInput)
    last = tool_message(state.conversation[-1])
    assert last.tool_call_id == "b" and last.is_error
    assert any(isinstance(a, EndTurn) and a.error for a in step)


def test_shutdown_mid_tool_records_answers_then_saves() -> None:
    state, _ = run(WaitingForUserInput(), user(), LlmResponded(with_calls("a")))
    state, step = transition(state, Shutdown())
    assert isinstance(state, ShuttingDown)
    assert isinstance(step[0], RecordMessage)
    assert tool_message(step[0].message).tool_call_id == "a"
    assert isinstance(step[-1], SaveThread)
    assert transition(state, user())[0] is state


def test_events_that_do_not_apply_are_ignored_without_change() -> None:
    start = WaitingForUserInput()
    for event in (
        ToolCompleted("zz", ToolOutcome("x")),
        LlmResponded(AssistantMessage()),
        RetryTimerFired(),
    ):
        state, step = transition(start, event)
        assert state is start and isinstance(step[0], Ignored)


def test_snapshot_records_pending_calls() -> None:
    state, _ = run(
        WaitingForUserInput(),
        user(),
        LlmResponded(with_calls("a", "b")),
        ToolCompleted("a", ToolOutcome("A")),
    )
    snap = snapshot(state)
    assert snap.kind is AgentStateKind.EXECUTING_TOOLS
    assert [c.id for c in snap.pending_tool_calls] == ["b"]


def test_restore_mid_tool_answers_as_interrupted_never_reruns() -> None:
    state, _ = run(
        WaitingForUserInput(),
        user(),
        LlmResponded(with_calls("a", "b")),
        ToolCompleted("a", ToolOutcome("A")),
    )
    snap = snapshot(state)
    assert isinstance(state, ExecutingTools)
    saved_messages = list(state.conversation)
    restored, actions = restore(snap, saved_messages)
    assert isinstance(restored, WaitingForUserInput)
    assert tool_message(restored.conversation[-1]).tool_call_id == "b"
    assert restored.conversation[-1].content == INTERRUPTED_RESULT
    assert [type(a).__name__ for a in actions] == ["RecordMessage", "SaveThread"]
    assert not any(isinstance(a, ExecuteTool) for a in actions)


def test_restore_catches_calls_saved_without_results_even_if_snapshot_is_stale() -> None:
    messages = [UserMessage(content="q"), with_calls("x")]
    restored, actions = restore(snapshot(WaitingForUserInput()), messages)
    assert isinstance(restored, WaitingForUserInput)
    assert tool_message(restored.conversation[-1]).tool_call_id == "x"
    assert isinstance(actions[0], RecordMessage)


def test_restore_error_state_keeps_the_error() -> None:
    state, _ = run(WaitingForUserInput(), user(), LlmFailed("bad request", transient=False))
    assert isinstance(state, Error)
    restored, actions = restore(snapshot(state), list(state.conversation))
    assert isinstance(restored, Error) and restored.error.message == "bad request"
    assert actions == []
    assert isinstance(transition(restored, user())[0], CallingLlm)


def test_resume_calls_the_model_only_when_it_owes_an_answer() -> None:
    waiting, _ = run(WaitingForUserInput(), user("q"), LlmStreamStarted(), Interrupted())
    state, step = transition(waiting, Resume())
    assert isinstance(state, CallingLlm) and step == [CallLlm(state.conversation)]
    answered, _ = run(WaitingForUserInput(), user("q"), LlmResponded(AssistantMessage(content="a")))
    state, step = transition(answered, Resume())
    assert state is answered and isinstance(step[0], Ignored)
