"""The agent state machine's vocabulary: the events it takes and the actions it returns.

Plain frozen dataclasses (no I/O). `loom.core.state` re-exports all of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from loom.core.messages import AssistantMessage, Message, ToolCall

Conversation = tuple[Message, ...]


class ErrorOrigin(StrEnum):
    LLM = "Llm"
    TOOL = "Tool"
    IO = "Io"


@dataclass(frozen=True)
class ToolProgressInfo:
    fraction: float | None = None
    message: str = ""
    units_processed: int | None = None


@dataclass(frozen=True)
class ToolOutcome:
    content: str
    is_error: bool = False
    images: tuple[Any, ...] = ()  # core.images.ImageRef: an image file the tool read


@dataclass(frozen=True)
class AgentError:
    origin: ErrorOrigin
    message: str
    transient: bool = False
    # a final error whose cause was transient (retries ran out): trying later may help,
    # unlike a refused connection, a bad request or a missing key
    worth_retrying: bool = False


# -- events (what happened) ------------------------------------------------------------


@dataclass(frozen=True)
class UserInput:
    message: Message  # a UserMessage, built by the runtime (ids, timestamps, mode)


@dataclass(frozen=True)
class LlmStreamStarted:
    pass


@dataclass(frozen=True)
class LlmResponded:
    message: AssistantMessage  # text, tool calls, usage, stop reason
    # ids of its calls that may run at the same time as their read-only neighbours
    # (the runtime knows each tool's risk; the machine only groups them)
    parallel: frozenset[str] = frozenset()


@dataclass(frozen=True)
class LlmFailed:
    message: str
    transient: bool


@dataclass(frozen=True)
class RetryTimerFired:
    pass


@dataclass(frozen=True)
class ToolStarted:
    call_id: str
    at: float = 0.0


@dataclass(frozen=True)
class ToolProgressed:
    call_id: str
    progress: ToolProgressInfo
    at: float = 0.0


@dataclass(frozen=True)
class ToolCompleted:
    call_id: str
    outcome: ToolOutcome
    at: float = 0.0
    message_id: str | None = None
    created_at: str | None = None


@dataclass(frozen=True)
class PermissionDenied:
    call_id: str
    subject: str | None = None
    at: float = 0.0
    reason: str | None = None  # a deny rule's reason; None: the user said no


@dataclass(frozen=True)
class PostToolsHookDone:
    """The post-tool hooks ran; `note` (their output, "" for none) goes to the model
    with the round's last tool result."""

    note: str = ""


@dataclass(frozen=True)
class IoFailed:
    message: str


@dataclass(frozen=True)
class Interrupted:
    reason: str = "interrupted by the user"
    # the words of an answer that was streaming (already on the person's screen), kept
    # in the thread as an assistant message with stop_reason "interrupted"
    partial: AssistantMessage | None = None


@dataclass(frozen=True)
class Resume:
    """Carry on a turn that stopped before the model answered (after a crash or an
    interrupt): the conversation ends with a user message or tool results."""


@dataclass(frozen=True)
class Shutdown:
    pass


AgentEvent = (
    UserInput
    | LlmStreamStarted
    | LlmResponded
    | LlmFailed
    | RetryTimerFired
    | ToolStarted
    | ToolProgressed
    | ToolCompleted
    | PermissionDenied
    | PostToolsHookDone
    | IoFailed
    | Interrupted
    | Resume
    | Shutdown
)

# -- actions (what the runtime should do) ----------------------------------------------


@dataclass(frozen=True)
class RecordMessage:
    """Append to the thread and publish new_message (the state already holds it)."""

    message: Message


@dataclass(frozen=True)
class AmendLastMessage:
    """Replace the thread's newest message (no other follows it yet) with this copy."""

    message: Message


@dataclass(frozen=True)
class SaveThread:
    pass


@dataclass(frozen=True)
class CallLlm:
    conversation: Conversation
    attempt: int = 0


@dataclass(frozen=True)
class ExecuteTool:
    """Check permission, then run the tool; report ToolStarted/Progressed/Completed."""

    call: ToolCall


@dataclass(frozen=True)
class ExecuteTools:
    """Run these read-only calls at the same time (each as ExecuteTool); their outcomes
    come back in the calls' order."""

    calls: tuple[ToolCall, ...]


@dataclass(frozen=True)
class ScheduleRetry:
    """Wait `policy.delay(attempt, error)` (the runtime owns the jitter), then RetryTimerFired."""

    attempt: int
    error: AgentError


@dataclass(frozen=True)
class PublishProgress:
    call: ToolCall
    progress: ToolProgressInfo


@dataclass(frozen=True)
class RunPostToolsHook:
    """Snapshot git state etc., then report PostToolsHookDone."""


@dataclass(frozen=True)
class ReportError:
    error: AgentError


@dataclass(frozen=True)
class EndTurn:
    text: str = ""
    error: AgentError | None = None
    interrupted: bool = False


@dataclass(frozen=True)
class WaitForInput:
    pass


@dataclass(frozen=True)
class Ignored:
    """The event does not apply to this state (a late progress report, a stray timer)."""

    reason: str


AgentAction = (
    RecordMessage
    | AmendLastMessage
    | SaveThread
    | CallLlm
    | ExecuteTool
    | ExecuteTools
    | ScheduleRetry
    | PublishProgress
    | RunPostToolsHook
    | ReportError
    | EndTurn
    | WaitForInput
    | Ignored
)
