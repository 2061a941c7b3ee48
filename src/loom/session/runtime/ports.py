"""What the session's helpers may use of it: narrow protocols instead of the Session.

`PermissionGate` publishes and flushes (EventPort); `execute_call` also feeds the
machine events that need no waiting and snapshots git (ToolPort); `LlmCaller` reads
the active model and tools (ModelPort); architect mode drives whole machine turns
(ArchitectPort). `Session` implements all of them; the helpers never import it, so
there is no import circle inside loom.session.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from loom.core.errors import LoomError

if TYPE_CHECKING:
    from loom.core import state as sm
    from loom.core.events import SessionEvent
    from loom.core.messages import Usage
    from loom.core.thread import Thread
    from loom.core.todos import TodoItem
    from loom.permissions import Verdict
    from loom.session.runtime.options import SessionOptions
    from loom.session.runtime.prompt import SessionPrompts
    from loom.tools.base import ToolRegistry


class TurnError(LoomError, RuntimeError):
    """The turn ended with an error (the model failed, or the session crashed and was
    restarted). The thread is saved and the session can take the next message."""

    def __init__(self, message: str, origin: str = "Llm") -> None:
        super().__init__(message)
        self.origin = origin


class PolicyPort(Protocol):
    """What a session asks about each tool call, and tells about a person's answer
    (loom.permissions.PermissionPolicy, or a wrapper of it from the assembly path)."""

    def check(self, tool: Any, args: dict[str, Any]) -> Verdict: ...

    def record(
        self, tool: Any, args: dict[str, Any], response: str, *, scope: str | None = None
    ) -> Any: ...


class EventPort(Protocol):
    """Publish on the session's topic; land the thread on disk."""

    id: str

    def publish(self, event: SessionEvent) -> None: ...

    async def flush(self) -> None: ...


class MachinePort(EventPort, Protocol):
    """Also feed the state machine an event whose actions need no waiting."""

    options: SessionOptions
    project_root: Path
    active_tools: ToolRegistry

    def apply_now(self, event: sm.AgentEvent) -> None: ...


class ToolPort(MachinePort, Protocol):
    thread: Thread
    in_git_repo: bool
    prompts: SessionPrompts
    active_model: str  # an image a tool read is shown only to a model that takes it

    async def git_snapshot(self) -> None: ...

    def update_todos(self, todos: list[TodoItem], source: str = "agent") -> None: ...


class ModelPort(MachinePort, Protocol):
    thread: Thread  # its id keys the providers' prompt caches
    active_model: str
    mode: str
    effort: str | None  # how hard the model reasons (loom.llm.effort); None: its default
    usage: Usage
    prompts: SessionPrompts
    tools: ToolRegistry  # the whole set (its shell owns the background commands)

    def count_usage(self, usage: Usage) -> None: ...


class SystemPromptSlot(Protocol):
    system_prompt: str | None  # None: the agent's own prompt and tools


class ArchitectPort(EventPort, Protocol):
    def update_todos(self, todos: list[TodoItem], source: str = "agent") -> None: ...

    options: SessionOptions
    project_root: Path
    thread: Thread
    model: str
    tools: ToolRegistry
    active_model: str
    active_tools: ToolRegistry
    busy: bool
    prompts: SessionPrompts

    @property
    def llm(self) -> SystemPromptSlot: ...

    async def drive(self, first: sm.AgentEvent) -> sm.EndTurn: ...

    def request_save(self) -> None: ...

    def settle_status(self) -> None: ...
