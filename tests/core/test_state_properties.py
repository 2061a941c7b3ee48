"""Property tests: whatever the order of events, the machine keeps its promises.

A random script of abstract moves is turned into concrete events against the current
state (so most moves are valid, some deliberately stray). After every step we check:
the conversation is kept (append-only, mirrored exactly by RecordMessage actions), every
tool result follows its call with nothing but results in between, a settled state has
no unanswered call, and LLM retries never exceed the limit.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from loom.core.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from loom.core.state import (
    CallingLlm,
    Completed,
    EndTurn,
    Error,
    ExecutingTools,
    Interrupted,
    IoFailed,
    LlmFailed,
    LlmResponded,
    LlmStreamStarted,
    MachineConfig,
    PermissionDenied,
    PostToolsHookDone,
    ProcessingLlmResponse,
    RecordMessage,
    Resume,
    RetryTimerFired,
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
    conversation_of,
    restore,
    snapshot,
    transition,
    unanswered_calls,
)

CONFIG = MachineConfig(max_retries=3, max_tool_rounds=4)

MOVES = st.sampled_from(
    [
        "user",
        "stream",
        "text",
        "tools",
        "fail_transient",
        "fail_permanent",
        "timer",
        "start",
        "progress",
        "complete",
        "deny",
        "stray",
        "hook",
        "interrupt",
        "io",
        "resume",
    ]
)


class Driver:
    def __init__(self) -> None:
        self.counter = 0

    def fresh(self) -> str:
        self.counter += 1
        return f"c{self.counter}"

    def event(self, move: str, state, n_calls: int):
        if move == "user":
            return UserInput(UserMessage(content=f"u{self.fresh()}"))
        if move == "stream":
            return LlmStreamStarted()
        if move == "text":
            return LlmResponded(AssistantMessage(content="done"))
        if move == "tools":
            calls = [ToolCall(id=self.fresh(), tool_name="t") for _ in range(n_calls)]
            return LlmResponded(AssistantMessage(content="", tool_calls=calls))
        if move == "fail_transient":
            return LlmFailed("503", transient=True)
        if move == "fail_permanent":
            return LlmFailed("400", transient=False)
        if move == "timer":
            return RetryTimerFired()
        if move == "hook":
            return PostToolsHookDone()
        if move == "interrupt":
            return Interrupted()
        if move == "io":
            return IoFailed("disk full")
        if move == "resume":
            return Resume()
        if move == "stray":
            return ToolCompleted("nope", ToolOutcome("x"))
        target = "nope"
        if isinstance(state, ExecutingTools):
            open_calls = [e.call.id for e in state.executions if not isinstance(e, Completed)]
            target = open_calls[0] if open_calls else "nope"
        if move == "start":
            return ToolStarted(target)
        if move == "progress":
            return ToolProgressed(target, ToolProgressInfo(0.5, "half"))
        if move == "deny":
            return PermissionDenied(target, "x")
        return ToolCompleted(target, ToolOutcome("ok"))


def assert_pairing(conversation) -> None:
    """Each tool result answers an earlier call of the nearest assistant message, and
    between an assistant message with calls and its results there are only results."""
    expecting: set[str] = set()
    for message in conversation:
        if isinstance(message, ToolMessage):
            assert message.tool_call_id in expecting, "a result without its call just before"
            expecting.discard(message.tool_call_id)
        else:
            assert not expecting, "a message slipped between a call and its result"
            if isinstance(message, AssistantMessage):
                expecting = {c.id for c in message.tool_calls}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(MOVES, st.integers(1, 3)), max_size=60))
def test_machine_invariants(script) -> None:
    driver = Driver()
    state = WaitingForUserInput()
    recorded: list = []
    consecutive_retries = 0
    for move, n_calls in script:
        before = conversation_of(state)
        event = driver.event(move, state, n_calls)
        state, actions = transition(state, event, CONFIG)
        recorded += [a.message for a in actions if isinstance(a, RecordMessage)]
        assert not isinstance(state, ShuttingDown)  # only Shutdown leads there
        conversation = conversation_of(state)
        # the conversation is kept and only grows, exactly by what was recorded
        assert conversation[: len(before)] == before
        assert list(conversation) == recorded
        assert_pairing(conversation)
        # a settled state never has a call without its result
        if isinstance(state, WaitingForUserInput | Error | CallingLlm | ProcessingLlmResponse):
            assert unanswered_calls(conversation) == []
        if isinstance(state, ExecutingTools):
            open_ids = {e.call.id for e in state.executions if not isinstance(e, Completed)}
            assert set(unanswered_calls(conversation)) == open_ids
        # retries are bounded
        retries = getattr(state, "retries", 0)
        assert retries <= CONFIG.max_retries
        if any(isinstance(a, ScheduleRetry) for a in actions):
            consecutive_retries += 1
            assert consecutive_retries <= CONFIG.max_retries
        if any(isinstance(a, EndTurn) for a in actions) or isinstance(event, UserInput):
            consecutive_retries = 0
        # any state can be saved and restored into a consistent, settled state
        restored, _ = restore(snapshot(state), list(conversation))
        assert unanswered_calls(conversation_of(restored)) == []
        assert conversation_of(restored)[: len(conversation)] == conversation


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(MOVES, st.integers(1, 3)), max_size=40))
def test_shutdown_from_anywhere_leaves_every_call_answered(script) -> None:
    driver = Driver()
    state = WaitingForUserInput()
    recorded: list = []
    for move, n_calls in script:
        state, actions = transition(state, driver.event(move, state, n_calls), CONFIG)
        recorded += [a.message for a in actions if isinstance(a, RecordMessage)]
    state, actions = transition(state, Shutdown(), CONFIG)
    recorded += [a.message for a in actions if isinstance(a, RecordMessage)]
    assert isinstance(state, ShuttingDown)
    assert unanswered_calls(recorded) == []
    assert_pairing(recorded)
