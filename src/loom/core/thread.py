"""The thread: one conversation with everything needed to read, search and resume it.

Field names follow seed 002 and the file format in design.md. The JSON on disk is
`Thread.model_dump_json(indent=2)`; unknown fields are kept when a file is rewritten.

History is append-only: once another message follows a message, do not mutate it
(replace the object if you must). The store relies on this to serialize and index
only new messages when a long thread is saved.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_serializer

from loom.core.clock import now_iso
from loom.core.decisions import DecisionLog
from loom.core.ids import new_thread_id
from loom.core.jsonish import is_json_object
from loom.core.messages import AssistantMessage, Message, ToolCall, UserMessage, clean_message
from loom.core.schema import SCHEMA_VERSION
from loom.core.todos import TodoItem

__all__ = ["SCHEMA_VERSION", "AgentStateKind", "Thread", "ThreadVisibility", "derive_title"]

TITLE_MAX_CHARS = 80
# fields written only when set, so a thread that never used them is written as before
OPTIONAL_FIELDS = ("todos", "parent_thread_id", "parent_call_id", "agent", "worktree")


class AgentStateKind(StrEnum):
    WAITING_FOR_USER_INPUT = "WaitingForUserInput"
    CALLING_LLM = "CallingLlm"
    PROCESSING_LLM_RESPONSE = "ProcessingLlmResponse"
    EXECUTING_TOOLS = "ExecutingTools"
    POST_TOOLS_HOOK = "PostToolsHook"
    ERROR = "Error"
    SHUTTING_DOWN = "ShuttingDown"


class ThreadVisibility(StrEnum):
    ORGANIZATION = "organization"
    PRIVATE = "private"
    PUBLIC = "public"


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", validate_assignment=False)


class AgentStateSnapshot(_Open):
    kind: AgentStateKind = AgentStateKind.WAITING_FOR_USER_INPUT
    retries: int = 0
    last_error: str | None = None
    pending_tool_calls: list[ToolCall] = Field(default_factory=list)


class ConversationSnapshot(_Open):
    messages: list[Message] = Field(default_factory=list)


class ThreadMetadata(_Open):
    title: str | None = None
    tags: list[str] = Field(default_factory=list)
    pinned: bool = False


class Thread(_Open):
    schema_version: int = SCHEMA_VERSION
    id: str = Field(default_factory=new_thread_id)
    version: int = 0
    created_at: str = Field(default_factory=now_iso)
    updated_at: str = Field(default_factory=now_iso)
    last_activity_at: str = Field(default_factory=now_iso)

    workspace_root: str | None = None
    cwd: str | None = None
    loom_version: str | None = None

    git_branch: str | None = None
    git_remote_url: str | None = None
    git_initial_branch: str | None = None
    git_initial_commit_sha: str | None = None
    git_current_commit_sha: str | None = None
    git_commits: list[str] = Field(default_factory=list)
    git_start_dirty: bool | None = None
    git_end_dirty: bool | None = None

    provider: str | None = None
    model: str | None = None

    conversation: ConversationSnapshot = Field(default_factory=ConversationSnapshot)
    agent_state: AgentStateSnapshot = Field(default_factory=AgentStateSnapshot)
    metadata: ThreadMetadata = Field(default_factory=ThreadMetadata)
    decision_graph: DecisionLog = Field(default_factory=DecisionLog)
    todos: list[TodoItem] | None = None  # the agent's latest todo list (core.todos)
    # a sub-agent's thread: the thread and the `task` call that started it, and which agent
    parent_thread_id: str | None = None
    parent_call_id: str | None = None
    agent: str | None = None
    worktree: dict[str, str] | None = None  # name, path, branch, repo (loom.worktrees)

    is_private: bool = False
    visibility: ThreadVisibility = ThreadVisibility.ORGANIZATION
    is_shared_with_support: bool = False

    @model_serializer(mode="wrap")
    def _drop_empty_graph(self, handler: Any) -> dict[str, Any]:
        # a thread that logged no decisions is written exactly as schema 1 wrote it
        data = handler(self)
        graph = data.get("decision_graph")
        if is_json_object(graph) and not any(graph.get(k) for k in ("nodes", "edges", "changes")):
            data.pop("decision_graph")
        for key in OPTIONAL_FIELDS:  # nor one that never kept a todo list, had a parent...
            if data.get(key) is None:
                data.pop(key, None)
        return data

    # JSON of messages that another message follows (append-only); see store.serialize.
    _serialization_cache: dict[str, Any] = PrivateAttr(default_factory=dict)

    # -- construction -------------------------------------------------------------

    @classmethod
    def new(
        cls,
        *,
        workspace_root: str | None = None,
        cwd: str | None = None,
        provider: str | None = None,
        model: str | None = None,
        is_private: bool = False,
    ) -> Thread:
        from loom import __version__

        return cls(
            workspace_root=workspace_root,
            cwd=cwd,
            loom_version=__version__,
            provider=provider,
            model=model,
            is_private=is_private,
            visibility=ThreadVisibility.PRIVATE if is_private else ThreadVisibility.ORGANIZATION,
        )

    # -- mutation (append-only history) ------------------------------------------------

    def touch(self) -> None:
        """Mark a change: bump `version` and the update/activity timestamps."""
        self.version += 1
        moment = now_iso()
        self.updated_at = moment
        self.last_activity_at = moment

    def append(self, message: Any) -> None:
        """Append one message; the first user message names an untitled thread.
        Text that could not be saved (a lone surrogate) is repaired on the way in."""
        clean_message(message)
        self.conversation.messages.append(message)
        if self.metadata.title is None and isinstance(message, UserMessage):
            self.metadata.title = derive_title(message.content)

    # -- reading -----------------------------------------------------------------

    @property
    def messages(self) -> list[Any]:
        return self.conversation.messages

    @property
    def serialization_cache(self) -> dict[str, Any]:
        """Used by the store to re-serialize only new messages on save."""
        return self._serialization_cache

    @property
    def title(self) -> str:
        return self.metadata.title or "(untitled)"

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)

    @classmethod
    def from_json(cls, text: str | bytes) -> Thread:
        return cls.model_validate_json(text)

    def tool_call_ids_without_result(self) -> list[str]:
        """Ids of tool calls that have no tool message yet (a crash mid-tool)."""
        answered = {m.tool_call_id for m in self.messages if m.role == "tool"}
        return [
            call.id
            for m in self.messages
            if isinstance(m, AssistantMessage)
            for call in m.tool_calls
            if call.id not in answered
        ]


def derive_title(text: str) -> str:
    """A one-line title from the first user message (a 50 MB paste: its first lines)."""
    line = " ".join(text[: TITLE_MAX_CHARS * 16].split())
    if len(line) <= TITLE_MAX_CHARS:
        return line or "(untitled)"
    return line[: TITLE_MAX_CHARS - 1].rstrip() + "…"
