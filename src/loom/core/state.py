"""The agent state machine (seed 003): seven states, a pure `transition`, snapshots.

`transition(state, event) -> (state, actions)` does no I/O and reads no clock: events
carry their own timestamps, and the session runtime performs the returned actions
(call the model, run a tool, save the thread, publish) and feeds the outcomes back as
events. Every state but `ShuttingDown` keeps the whole conversation; a tool result is
only ever appended by completing the execution of the call it answers.

Resume policy (see `restore`): a tool call that was pending or running when Loom
stopped is *answered as interrupted*, never re-run: a shell command or an edit may have
half happened, and only the model (told so) can judge whether to try again. A turn that
stopped before the model answered resumes as waiting for input; the `Resume` event
(`Session.continue_turn`) carries it on without a new user message.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from loom.core import loop_guard
from loom.core.messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from loom.core.state_events import (
    AgentAction,
    AgentError,
    AgentEvent,
    AmendLastMessage,
    CallLlm,
    Conversation,
    EndTurn,
    ErrorOrigin,
    ExecuteTool,
    ExecuteTools,
    Ignored,
    Interrupted,
    IoFailed,
    LlmFailed,
    LlmResponded,
    LlmStreamStarted,
    PermissionDenied,
    PostToolsHookDone,
    PublishProgress,
    RecordMessage,
    ReportError,
    Resume,
    RetryTimerFired,
    RunPostToolsHook,
    SaveThread,
    ScheduleRetry,
    Shutdown,
    ToolCompleted,
    ToolOutcome,
    ToolProgressed,
    ToolProgressInfo,
    ToolStarted,
    UserInput,
    WaitForInput,
)
from loom.core.thread import AgentStateKind, AgentStateSnapshot

INTERRUPTED_RESULT = (
    "Interrupted: this tool call was stopped before it finished (the user interrupted the "
    "turn or Loom stopped). It may have partly run; check the current state before retrying."
)
PERMISSION_DENIED_RESULT = (
    "Permission denied: the user did not allow {tool} to run{subject}. Do not repeat the same "
    "call; ask the user what they want instead, or take another approach."
)
ROUND_LIMIT_RESULT = (
    "Not run: this turn reached its limit of {limit} tool rounds. Summarise what you did and "
    "ask the user whether to continue."
)


@dataclass(frozen=True)
class MachineConfig:
    max_retries: int = 5  # transient LLM failures retried per call
    max_tool_rounds: int = 200  # model responses with tool calls per user turn


DEFAULT_CONFIG = MachineConfig()


# -- tool executions: Pending -> Running -> Completed -------------------------------------


@dataclass(frozen=True)
class Pending:
    call: ToolCall
    requested_at: float = 0.0


@dataclass(frozen=True)
class Running:
    call: ToolCall
    started_at: float = 0.0
    last_update_at: float = 0.0
    progress: ToolProgressInfo | None = None


@dataclass(frozen=True)
class Completed:
    call: ToolCall
    started_at: float
    completed_at: float
    outcome: ToolOutcome


ToolExecutionStatus = Pending | Running | Completed


# -- the seven states ------------------------------------------------------------------


@dataclass(frozen=True)
class WaitingForUserInput:
    conversation: Conversation = ()


@dataclass(frozen=True)
class CallingLlm:
    conversation: Conversation
    retries: int = 0
    rounds: int = 0  # tool rounds so far in this turn


@dataclass(frozen=True)
class ProcessingLlmResponse:
    """The response is streaming in (text deltas are published, not state changes)."""

    conversation: Conversation
    retries: int = 0
    rounds: int = 0


@dataclass(frozen=True)
class ExecutingTools:
    conversation: Conversation
    executions: tuple[ToolExecutionStatus, ...]
    rounds: int = 1
    parallel: frozenset[str] = frozenset()  # calls that may share a batch (read-only)
    batch: tuple[str, ...] = ()  # the calls running together now; the next waits for all


@dataclass(frozen=True)
class PostToolsHook:
    conversation: Conversation
    completed_tools: tuple[Completed, ...]
    rounds: int = 1
    pending_llm_request: bool = True


@dataclass(frozen=True)
class Error:
    conversation: Conversation
    error: AgentError
    retries: int = 0
    rounds: int = 0

    @property
    def origin(self) -> ErrorOrigin:
        return self.error.origin


@dataclass(frozen=True)
class ShuttingDown:
    pass


AgentState = (
    WaitingForUserInput
    | CallingLlm
    | ProcessingLlmResponse
    | ExecutingTools
    | PostToolsHook
    | Error
    | ShuttingDown
)

Step = tuple[AgentState, list[AgentAction]]

# -- the transition function -----------------------------------------------------------


def transition(
    state: AgentState, event: AgentEvent, config: MachineConfig = DEFAULT_CONFIG
) -> Step:
    """Pure: the next state and the actions the runtime must perform, in order."""
    if isinstance(event, Shutdown):
        return _shutdown(state)
    if isinstance(state, ShuttingDown):
        return state, [Ignored("the agent is shutting down")]
    if isinstance(event, Interrupted):
        return _interrupt(state, event)
    if isinstance(event, IoFailed):
        return state, [ReportError(AgentError(ErrorOrigin.IO, event.message))]

    match state, event:
        case ((WaitingForUserInput() | Error()), UserInput(message=message)):
            conversation = (*state.conversation, message)
            return CallingLlm(conversation), [
                RecordMessage(message),
                SaveThread(),
                CallLlm(conversation),
            ]
        case CallingLlm(), LlmStreamStarted():
            return ProcessingLlmResponse(state.conversation, state.retries, state.rounds), []
        case ((CallingLlm() | ProcessingLlmResponse()), LlmResponded(message=message)):
            return _responded(state, message, config, event.parallel)
        case ((CallingLlm() | ProcessingLlmResponse()), LlmFailed()):
            return _llm_failed(state, event, config)
        case Error(), RetryTimerFired() if state.error.transient:
            return CallingLlm(state.conversation, state.retries, state.rounds), [
                CallLlm(state.conversation, attempt=state.retries)
            ]
        case ExecutingTools(), ToolStarted() | ToolProgressed() | ToolCompleted():
            return _tool_event(state, event)
        case ExecutingTools(), PermissionDenied():
            call = _find(state.executions, event.call_id)
            if call is None:
                return state, [Ignored(f"no tool call {event.call_id} is pending")]
            subject = f" on {event.subject}" if event.subject else ""
            text = PERMISSION_DENIED_RESULT.format(tool=call.tool_name, subject=subject)
            if event.reason:
                text = f"Refused: {call.tool_name}{subject} is not allowed ({event.reason})."
                text += " Do not repeat the call; take another approach or ask the user."
            completed = ToolCompleted(event.call_id, ToolOutcome(text, is_error=True), event.at)
            return _tool_event(state, completed)
        case ((WaitingForUserInput() | Error()), Resume()) if awaits_answer(state.conversation):
            return CallingLlm(state.conversation), [CallLlm(state.conversation)]
        case PostToolsHook(), PostToolsHookDone():
            return _hooks_done(state, event)
        case _:
            return state, [
                Ignored(f"{type(event).__name__} does not apply to {type(state).__name__}")
            ]


def _responded(
    state: CallingLlm | ProcessingLlmResponse,
    message: AssistantMessage,
    config: MachineConfig,
    parallel: frozenset[str] = frozenset(),
) -> Step:
    conversation = (*state.conversation, message)
    actions: list[AgentAction] = [RecordMessage(message)]
    if not message.tool_calls:
        actions += [SaveThread(), EndTurn(message.content), WaitForInput()]
        return WaitingForUserInput(conversation), actions
    rounds = state.rounds + 1
    if rounds > config.max_tool_rounds:
        # Answer every call (a call is never left without its result), then stop the turn.
        text = ROUND_LIMIT_RESULT.format(limit=config.max_tool_rounds)
        results = [
            _tool_message(call, ToolOutcome(text, is_error=True)) for call in message.tool_calls
        ]
        error = AgentError(ErrorOrigin.TOOL, f"stopped after {config.max_tool_rounds} tool rounds")
        actions += [RecordMessage(m) for m in results]
        actions += [
            SaveThread(),
            ReportError(error),
            EndTurn(message.content, error),
            WaitForInput(),
        ]
        return WaitingForUserInput((*conversation, *results)), actions
    executions = tuple(Pending(call) for call in message.tool_calls)
    batch = _next_batch(executions, parallel)
    executing = ExecutingTools(conversation, executions, rounds, parallel, _ids(batch))
    return executing, [*actions, SaveThread(), _execute(batch)]


def _next_batch(
    executions: Sequence[ToolExecutionStatus], parallel: frozenset[str]
) -> tuple[ToolCall, ...]:
    """The next calls to run: the first pending one alone, or, when it may run in
    parallel, it and the parallel calls right after it."""
    pending = [ex.call for ex in executions if isinstance(ex, Pending)]
    if not pending:
        return ()
    batch = [pending[0]]
    if pending[0].id in parallel:
        for call in pending[1:]:
            if call.id not in parallel:
                break
            batch.append(call)
    return tuple(batch)


def _execute(batch: tuple[ToolCall, ...]) -> ExecuteTool | ExecuteTools:
    return ExecuteTool(batch[0]) if len(batch) == 1 else ExecuteTools(batch)


def _ids(batch: tuple[ToolCall, ...]) -> tuple[str, ...]:
    return tuple(call.id for call in batch)


def _hooks_done(state: PostToolsHook, event: PostToolsHookDone) -> Step:
    """The hooks' output joins the round's last tool result (that message is still the
    newest), so the model reads it with the results; then the model is called."""
    conversation = state.conversation
    actions: list[AgentAction] = []
    last = conversation[-1] if conversation else None
    if event.note and isinstance(last, ToolMessage):
        amended = last.model_copy(update={"content": f"{last.content}\n\n{event.note}"})
        conversation = (*conversation[:-1], amended)
        actions += [AmendLastMessage(amended), SaveThread()]
    return CallingLlm(conversation, 0, state.rounds), [*actions, CallLlm(conversation)]


def _llm_failed(
    state: CallingLlm | ProcessingLlmResponse, event: LlmFailed, config: MachineConfig
) -> Step:
    retries = state.retries + 1
    error = AgentError(ErrorOrigin.LLM, event.message, transient=event.transient)
    if event.transient and retries <= config.max_retries:
        return Error(state.conversation, error, retries, state.rounds), [
            ScheduleRetry(retries, error)
        ]
    final = replace(error, transient=False, worth_retrying=event.transient)
    return Error(state.conversation, final, state.retries, state.rounds), [
        SaveThread(),
        ReportError(final),
        EndTurn("", final),
        WaitForInput(),
    ]


def _tool_event(state: ExecutingTools, event: ToolStarted | ToolProgressed | ToolCompleted) -> Step:
    index = next(
        (
            i
            for i, ex in enumerate(state.executions)
            if ex.call.id == event.call_id and not isinstance(ex, Completed)
        ),
        None,
    )
    if index is None:
        return state, [Ignored(f"no open tool call {event.call_id} in this round")]
    current = state.executions[index]

    if isinstance(event, ToolStarted):
        running = Running(current.call, event.at, event.at)
        return _with_execution(state, index, running), []
    if isinstance(event, ToolProgressed):
        # Progress is collected without a state transition: same kind, same phase.
        started = current.started_at if isinstance(current, Running) else event.at
        running = Running(current.call, started, event.at, event.progress)
        return _with_execution(state, index, running), [
            PublishProgress(current.call, event.progress)
        ]

    started = current.started_at if isinstance(current, Running) else event.at
    outcome, streak = event.outcome, 0
    if outcome.is_error:  # the stuck-loop guard (loom.core.loop_guard)
        streak = loop_guard.failure_streak(state.conversation, current.call) + 1
        if streak >= loop_guard.WARN_AT:
            note = loop_guard.CHANGE_APPROACH.format(
                tool=current.call.tool_name, count=streak, stop=loop_guard.STOP_AT
            )
            outcome = replace(outcome, content=f"{outcome.content}\n\n{note}")
    done = Completed(current.call, started, event.at, outcome)
    result = _tool_message(current.call, outcome, event.message_id, event.created_at)
    conversation = (*state.conversation, result)
    executions = (*state.executions[:index], done, *state.executions[index + 1 :])
    actions: list[AgentAction] = [RecordMessage(result), SaveThread()]
    if streak >= loop_guard.STOP_AT:
        return _stop_stuck(state, conversation, executions, current.call, streak, actions)
    finished = {ex.call.id for ex in executions if isinstance(ex, Completed)}
    if any(call_id not in finished for call_id in state.batch):
        # others of this batch are still running: the next call waits for them
        return replace(state, conversation=conversation, executions=executions), actions
    batch = _next_batch(executions, state.parallel)
    if batch:
        actions.append(_execute(batch))
        following = replace(
            state, conversation=conversation, executions=executions, batch=_ids(batch)
        )
        return following, actions
    completed = tuple(ex for ex in executions if isinstance(ex, Completed))
    actions.append(RunPostToolsHook())
    return PostToolsHook(conversation, completed, state.rounds), actions


def _stop_stuck(
    state: ExecutingTools,
    conversation: Conversation,
    executions: tuple[ToolExecutionStatus, ...],
    call: ToolCall,
    streak: int,
    actions: list[AgentAction],
) -> Step:
    """The same call failed STOP_AT times in a row: the calls left are answered as not
    run (every call keeps its result) and the turn ends with a message to the person."""
    text = loop_guard.STOPPED_RESULT.format(tool=call.tool_name, count=streak)
    answers = [
        _tool_message(ex.call, ToolOutcome(text, is_error=True))
        for ex in executions
        if not isinstance(ex, Completed)
    ]
    message = loop_guard.STOPPED_MESSAGE.format(tool=call.tool_name, count=streak)
    error = AgentError(ErrorOrigin.TOOL, message)
    actions += [RecordMessage(m) for m in answers]
    actions += [SaveThread(), ReportError(error), EndTurn("", error), WaitForInput()]
    return WaitingForUserInput((*conversation, *answers)), actions


def _with_execution(
    state: ExecutingTools, index: int, status: ToolExecutionStatus
) -> ExecutingTools:
    executions = (*state.executions[:index], status, *state.executions[index + 1 :])
    return replace(state, executions=executions)


def _interrupt(
    state: WaitingForUserInput
    | CallingLlm
    | ProcessingLlmResponse
    | ExecutingTools
    | PostToolsHook
    | Error,
    event: Interrupted,
) -> Step:
    if isinstance(state, WaitingForUserInput):
        return state, [Ignored("nothing to interrupt")]
    conversation = state.conversation
    actions: list[AgentAction] = []
    if isinstance(state, ExecutingTools):
        answers = [
            _tool_message(ex.call, ToolOutcome(INTERRUPTED_RESULT, is_error=True))
            for ex in state.executions
            if not isinstance(ex, Completed)
        ]
        conversation = (*conversation, *answers)
        actions += [RecordMessage(m) for m in answers]
    elif isinstance(state, ProcessingLlmResponse) and event.partial is not None:
        conversation = (*conversation, event.partial)
        actions.append(RecordMessage(event.partial))
    actions += [SaveThread(), EndTurn("", None, interrupted=True), WaitForInput()]
    return WaitingForUserInput(conversation), actions


def _shutdown(state: AgentState) -> Step:
    if isinstance(state, ShuttingDown):
        return state, []
    actions: list[AgentAction] = []
    if isinstance(state, ExecutingTools):
        _, actions = _interrupt(state, Interrupted("Loom is shutting down"))
        actions = [a for a in actions if isinstance(a, RecordMessage)]
    return ShuttingDown(), [*actions, SaveThread()]


def _find(executions: Sequence[ToolExecutionStatus], call_id: str) -> ToolCall | None:
    for ex in executions:
        if ex.call.id == call_id and not isinstance(ex, Completed):
            return ex.call
    return None


def _tool_message(
    call: ToolCall,
    outcome: ToolOutcome,
    message_id: str | None = None,
    created_at: str | None = None,
) -> ToolMessage:
    return ToolMessage(
        tool_call_id=call.id,
        tool_name=call.tool_name,
        content=outcome.content,
        is_error=True if outcome.is_error else None,
        images=list(outcome.images) or None,
        id=message_id,
        created_at=created_at,
    )


# -- reading a state -------------------------------------------------------------------


def conversation_of(state: AgentState) -> Conversation:
    return () if isinstance(state, ShuttingDown) else state.conversation


_KINDS: dict[type, AgentStateKind] = {
    WaitingForUserInput: AgentStateKind.WAITING_FOR_USER_INPUT,
    CallingLlm: AgentStateKind.CALLING_LLM,
    ProcessingLlmResponse: AgentStateKind.PROCESSING_LLM_RESPONSE,
    ExecutingTools: AgentStateKind.EXECUTING_TOOLS,
    PostToolsHook: AgentStateKind.POST_TOOLS_HOOK,
    Error: AgentStateKind.ERROR,
    ShuttingDown: AgentStateKind.SHUTTING_DOWN,
}


def kind_of(state: AgentState) -> AgentStateKind:
    return _KINDS[type(state)]


def status_of(state: AgentState) -> str:
    """Seed 001's session status: idle, thinking or executing_tool."""
    if isinstance(state, ExecutingTools):
        return "executing_tool"
    if isinstance(state, CallingLlm | ProcessingLlmResponse | PostToolsHook):
        return "thinking"
    if isinstance(state, Error) and state.error.transient:
        return "thinking"  # waiting to retry
    return "idle"


# -- snapshot / restore ----------------------------------------------------------------


def snapshot(state: AgentState) -> AgentStateSnapshot:
    """What the thread file records about the agent (its `agent_state`)."""
    retries = getattr(state, "retries", 0)
    last_error = state.error.message if isinstance(state, Error) else None
    pending: list[ToolCall] = []
    if isinstance(state, ExecutingTools):
        pending = [ex.call for ex in state.executions if not isinstance(ex, Completed)]
    return AgentStateSnapshot(
        kind=kind_of(state), retries=retries, last_error=last_error, pending_tool_calls=pending
    )


def restore(snap: AgentStateSnapshot, messages: Sequence[Message]) -> Step:
    """Rebuild a state from a saved thread.

    Tool calls without a result (the snapshot's pending calls, and any call the last save
    caught between the assistant message and its results) are answered as interrupted;
    the returned actions record those answers and save. An `Error` snapshot stays an
    error (the user can send a new message from there); everything else waits for input.
    """
    outcome = ToolOutcome(INTERRUPTED_RESULT, is_error=True)
    answers = [_tool_message(call, outcome) for call in _unanswered(messages)]
    conversation = (*messages, *answers)
    actions: list[AgentAction] = [RecordMessage(m) for m in answers]
    if answers:
        actions.append(SaveThread())
    if snap.kind == AgentStateKind.ERROR and snap.last_error and not answers:
        error = AgentError(ErrorOrigin.LLM, snap.last_error)
        return Error(conversation, error, snap.retries), actions
    return WaitingForUserInput(conversation), actions


def awaits_answer(conversation: Sequence[Message]) -> bool:
    """True when the model owes an answer: the last message is the user's or a tool
    result (a turn that stopped before the model replied), or an answer cut off while
    it streamed."""
    return bool(conversation) and (
        isinstance(conversation[-1], UserMessage | ToolMessage) or cut_off(conversation[-1])
    )


def cut_off(message: Message) -> bool:
    """An assistant message interrupted while it streamed (kept for the record)."""
    return isinstance(message, AssistantMessage) and message.stop_reason == "interrupted"


def to_send(conversation: Conversation) -> Conversation:
    """What a model call sends: without a trailing cut-off answer, which the model is
    asked to give again (a provider would take it as the start of its reply)."""
    if conversation and cut_off(conversation[-1]):
        return conversation[:-1]
    return conversation


def unanswered_calls(conversation: Sequence[Message]) -> list[str]:
    """Ids of tool calls with no result message (a broken pairing; should stay empty)."""
    return [call.id for call in _unanswered(conversation)]


def _unanswered(conversation: Sequence[Message]) -> list[ToolCall]:
    answered = {m.tool_call_id for m in conversation if isinstance(m, ToolMessage)}
    return [
        call
        for m in conversation
        if isinstance(m, AssistantMessage)
        for call in m.tool_calls
        if call.id not in answered
    ]
