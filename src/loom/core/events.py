"""Session events: one typed union, serialized the same way by every face.

The in-process bus, the web UI's SSE, `loom run --output-format stream-json` and ACP all
carry these. Names follow seed 001 (new_message, session_status, tool_executing,
tool_complete, permission_request, mode_changed) plus text deltas, retries, progress,
errors and sync errors.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from loom.core.messages import Message
from loom.core.permission_modes import PermissionMode
from loom.core.todos import TodoItem

SessionStatusName = Literal["idle", "thinking", "executing_tool"]
ModeName = Literal["normal", "architect"]


class _Event(BaseModel):
    # Built when first made, not when imported: most kinds never occur in a run, and
    # building two dozen validators cost start-up tens of milliseconds.
    model_config = ConfigDict(defer_build=True)

    session_id: str


class NewMessage(_Event):
    type: Literal["new_message"] = "new_message"
    message: Message


class SessionStatus(_Event):
    type: Literal["session_status"] = "session_status"
    status: SessionStatusName


class ToolExecuting(_Event):
    type: Literal["tool_executing"] = "tool_executing"
    tool_name: str
    call_id: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ToolProgress(_Event):
    type: Literal["tool_progress"] = "tool_progress"
    tool_name: str
    call_id: str
    fraction: float | None = None
    message: str = ""


class ToolComplete(_Event):
    type: Literal["tool_complete"] = "tool_complete"
    tool_name: str
    call_id: str
    result: str
    is_error: bool = False


class PermissionRequest(_Event):
    type: Literal["permission_request"] = "permission_request"
    tool_name: str
    tool_path: str | None = None  # the path or command the grant would cover
    call_id: str = ""
    arguments: dict[str, Any] = Field(default_factory=dict)
    reason: str = ""  # why a person is asked, e.g. "dangerous command: deletes files"
    # For tools that run a command (shell, git): whether it runs in the sandbox, and a
    # short text to show, e.g. "runs sandboxed (bubblewrap): ...; network off".
    sandboxed: bool | None = None
    sandbox: str = ""


class ModeChanged(_Event):
    type: Literal["mode_changed"] = "mode_changed"
    mode: ModeName


class PermissionModeChanged(_Event):
    """The session's permission mode (Claude Code's names; loom.permissions.modes)."""

    type: Literal["permission_mode_changed"] = "permission_mode_changed"
    permission_mode: PermissionMode


class TextDeltaEvent(_Event):
    type: Literal["text_delta"] = "text_delta"
    text: str


class ThinkingDeltaEvent(_Event):
    """A piece of the model's readable reasoning (Claude's thinking, an OpenAI reasoning
    summary, a Gemini thought summary) as it streams; never opaque reasoning."""

    type: Literal["thinking_delta"] = "thinking_delta"
    text: str


class LlmRetry(_Event):
    type: Literal["llm_retry"] = "llm_retry"
    attempt: int
    delay_seconds: float
    error: str


class SessionError(_Event):
    type: Literal["error"] = "error"
    origin: Literal["Llm", "Tool", "Io", "Session"]  # Session: a crash, restarted from disk
    message: str


class ArchitectPlan(_Event):
    """Architect mode: the strong model's plan, before any step runs."""

    type: Literal["architect_plan"] = "architect_plan"
    summary: str = ""
    steps: list[dict[str, str]] = Field(default_factory=list)  # file, action, description


class ArchitectStep(_Event):
    """Architect mode: one plan step started or finished (outcome is the editor's answer)."""

    type: Literal["architect_step"] = "architect_step"
    index: int  # 1-based
    total: int
    status: Literal["started", "completed", "failed", "interrupted"]
    file: str = ""
    action: str = ""
    description: str = ""
    outcome: str = ""


class SyncError(_Event):
    type: Literal["sync_error"] = "sync_error"
    thread_id: str
    message: str


class FilesRestored(_Event):
    """Undo, redo or rewind put the project's files back to a checkpoint."""

    type: Literal["files_restored"] = "files_restored"
    action: Literal["undo", "redo", "rewind"]
    paths: list[str] = Field(default_factory=list)
    overwritten: list[str] = Field(default_factory=list)  # hand edits replaced on request


class ConversationRewound(_Event):
    """Messages were set aside as a side branch: the model no longer sees them."""

    type: Literal["conversation_rewound"] = "conversation_rewound"
    hidden_messages: int


class ContextCompacted(_Event):
    """Old turns were summarised (or, when that failed, dropped) to fit the context."""

    type: Literal["context_compacted"] = "context_compacted"
    summarised_messages: int = 0
    model: str = ""
    tokens_before: int = 0
    tokens_after: int = 0
    fallback: str = ""  # why turns were dropped instead of summarised; "" when summarised


class DecisionCascade(_Event):
    """A decision-graph node fell below confidence 50: the nodes that depend on it (along
    requires/blocks edges) are now uncertain."""

    type: Literal["decision_cascade"] = "decision_cascade"
    node_id: str
    title: str = ""
    confidence: int
    uncertain: list[dict[str, str]] = Field(default_factory=list)  # id, title, node_type


class TodoList(_Event):
    """The agent's todo list changed (todo_write), or an architect plan's steps moved on:
    every face shows `todos` as a checklist (loom.core.todos)."""

    type: Literal["todo_list"] = "todo_list"
    todos: list[TodoItem] = Field(default_factory=list)
    source: Literal["agent", "architect"] = "agent"


class Notice(_Event):
    """Something the person should read that is not the agent's: a lifecycle hook's
    warning (it failed, timed out, printed too much) or its `systemMessage`."""

    type: Literal["notice"] = "notice"
    level: Literal["info", "warning"] = "info"
    source: str = ""  # e.g. "PreToolUse hook"
    text: str


class SubagentStatus(_Event):
    """A sub-agent (the `task` call `call_id` of this session) started or finished. Its
    own events are on its own topic; its thread is `child_thread_id`."""

    type: Literal["subagent_status"] = "subagent_status"
    call_id: str
    child_session_id: str
    child_thread_id: str
    agent: str = ""  # the custom agent's name; "" for the general one
    description: str = ""
    status: Literal["started", "completed", "failed", "cancelled"] = "started"
    detail: str = ""  # the failure, or where a worktree child left its changes


class SubagentMessage(_Event):
    """A message a sub-agent recorded, echoed on its parent's topic (stream-json prints
    it with `parent_tool_use_id` = the task call, as Claude Code does)."""

    type: Literal["subagent_message"] = "subagent_message"
    call_id: str
    child_thread_id: str
    message: Message


class BackgroundCommandChanged(_Event):
    """A background command of this session (`shell` with background: true) started, its
    output ended (it closed its stdout), or it ended: exited (with `exit_code`) or was
    killed. Faces list them from these; stream-json prints `loom.background_command`."""

    type: Literal["background_command"] = "background_command"
    command_id: str
    command: str
    change: Literal["started", "output_ended", "exited", "killed"]
    exit_code: int | None = None


class TurnComplete(_Event):
    type: Literal["turn_complete"] = "turn_complete"
    text: str = ""


SessionEvent = Annotated[
    NewMessage
    | SessionStatus
    | ToolExecuting
    | ToolProgress
    | ToolComplete
    | PermissionRequest
    | ModeChanged
    | PermissionModeChanged
    | TextDeltaEvent
    | ThinkingDeltaEvent
    | LlmRetry
    | SessionError
    | ArchitectPlan
    | ArchitectStep
    | SyncError
    | FilesRestored
    | ConversationRewound
    | ContextCompacted
    | DecisionCascade
    | TodoList
    | Notice
    | SubagentStatus
    | SubagentMessage
    | BackgroundCommandChanged
    | TurnComplete,
    Field(discriminator="type"),
]


def topic_for(session_id: str) -> str:
    return f"session:{session_id}"
