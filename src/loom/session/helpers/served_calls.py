"""`loom mcp serve` runs each tool call as a session does: the person's PreToolUse and
PostToolUse hooks fire through the session's own hook points (`SessionHooks`), and a call
that can change files gets a checkpoint first through the session's `Checkpointer`.

The checkpoints are recorded in a thread of the server's own (private: never synced),
one turn per call that changes files (a user message naming the call, the assistant
message holding it, its result), so `loom undo` takes an MCP client's last edit back as
it takes back a session's turn. The thread is loaded, changed and saved under its writer
lock for one call at a time only, so `loom undo` works while the server runs.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from loom.core.clock import now_iso
from loom.core.events import SessionEvent
from loom.core.ids import new_call_id, new_message_id
from loom.core.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from loom.core.thread import Thread
from loom.session.runtime.checkpointing import Checkpointer
from loom.session.runtime.hook_points import SessionHooks, refusal_text
from loom.tools.base import may_change_files, risk_of

log = logging.getLogger(__name__)

TITLE = "loom mcp serve: another agent's tool calls"
Execute = Callable[[dict[str, Any]], Awaitable[tuple[str, bool]]]


class ServedCalls:
    """What a session adds around a tool call, for calls that come over MCP. Typed like
    the `session` the hook points and the checkpointer take (id, thread, store,
    project_root, options.cwd, publish, request_save)."""

    def __init__(
        self, store: Any, project_root: Path, hooks: Any, checkpointer: Checkpointer | None
    ) -> None:
        self.store = store
        self.project_root = project_root
        self.options = SimpleNamespace(cwd=project_root)
        self.thread = Thread.new(
            workspace_root=str(project_root), cwd=str(project_root), is_private=True
        )
        self.thread.metadata.title = TITLE
        self.id = self.thread.id
        self.hooks = SessionHooks(self, hooks) if hooks else None
        self.checkpointer = checkpointer
        self._one_at_a_time = asyncio.Lock()
        self._saved = False

    # -- what the hook points and the checkpointer call -------------------------------

    def publish(self, event: SessionEvent) -> None:
        """A hook's warning or a failed checkpoint: nobody watches a bus here, so the
        server's log says it."""
        text = getattr(event, "text", None) or getattr(event, "message", None)
        if text:
            log.warning("loom mcp serve: %s", text)

    def request_save(self) -> None:
        """(Saved once the call is over, under the thread's writer lock.)"""

    # -- around a call ----------------------------------------------------------------

    async def before(
        self, name: str, args: dict[str, Any]
    ) -> tuple[dict[str, Any], str | None, str | None]:
        """The PreToolUse hooks: (the arguments to run with, the hooks' permission
        decision or None, the refusal text when a hook blocked the call)."""
        if self.hooks is None:
            return args, None, None
        call = ToolCall(id=new_call_id(), tool_name=name, arguments_json=args)
        verdict = await self.hooks.pre_tool_use(call)
        if verdict is None:
            return args, None, None
        if verdict.blocked or verdict.stop is not None:
            return args, None, refusal_text(verdict)
        if verdict.updated_input is not None:  # the hook rewrote the call's input
            args = verdict.updated_input
        return args, verdict.decision, None

    async def run(self, tool: Any, args: dict[str, Any], execute: Execute) -> tuple[str, bool]:
        """Run the call (`execute`), with a checkpoint first when it can change files,
        and the PostToolUse hooks' feedback added to its result."""
        call = ToolCall(id=new_call_id(), tool_name=tool.name, arguments_json=args)
        changes = risk_of(tool, args) != "read" or may_change_files(tool)
        if changes and self.checkpointer is not None:
            text, is_error = await self._checkpointed(call, execute)
        else:
            text, is_error = await execute(args)
        if self.hooks is not None:
            feedback = await self.hooks.post_tool_use(call, text, is_error)
            if feedback:
                text = f"{text}\n\n{feedback}"
        return text, is_error

    async def _checkpointed(self, call: ToolCall, execute: Execute) -> tuple[str, bool]:
        assert self.checkpointer is not None
        async with self._one_at_a_time:
            lock = await asyncio.to_thread(self.store.acquire_writer, self.id)
            try:
                if self._saved:  # `loom undo` may have added its records meanwhile
                    self.thread = await asyncio.to_thread(self.store.load, self.id) or self.thread
                said = f"An MCP client called {call.tool_name} through `loom mcp serve`."
                self.thread.append(UserMessage(content=said, id=new_message_id(),
                                               created_at=now_iso()))  # fmt: skip
                self.thread.append(AssistantMessage(id=new_message_id(), created_at=now_iso(),
                                                    tool_calls=[call]))  # fmt: skip
                await self.checkpointer.before_tool(self, call)
                text, is_error = await execute(call.arguments_json)
                self.thread.append(
                    ToolMessage(
                        content=text, tool_call_id=call.id, tool_name=call.tool_name,
                        is_error=is_error, id=new_message_id(), created_at=now_iso(),
                    )
                )  # fmt: skip
                await self.checkpointer.after_turn(self)  # the files as the call left them
                self.thread.touch()
                await asyncio.to_thread(self.store.save, self.thread)
                self._saved = True
            finally:
                lock.release()
        return text, is_error
