"""Taking checkpoints during a session, and the records they leave in the thread.

The session calls `before_tool` before every tool call that can change files (the
tool's risk is not "read": file_write, file_edit, shell, git that moves HEAD or the
tree) and `after_turn` when a turn that took checkpoints ends. Each snapshot is a commit
in the project's private checkpoint store; the thread's `checkpoints` field records it,
tied to the user message that started the turn and the assistant message that asked
for the tool. Undo, redo and rewind (loom.session.helpers.rewind) read these records.

A checkpoint that cannot be taken never stops the agent: the failure is logged and
published once as an error event, and the tool runs.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from loom.core.clock import now_iso
from loom.core.events import SessionError
from loom.core.extras import extra_field
from loom.core.messages import AssistantMessage, ToolCall, UserMessage

if TYPE_CHECKING:
    from loom.checkpoints import CheckpointStore


log = logging.getLogger(__name__)

FIELD = "checkpoints"


def records(thread: Any) -> list[dict[str, Any]]:
    found = extra_field(thread, FIELD)
    return found if isinstance(found, list) else []


def add_record(thread: Any, record: dict[str, Any]) -> dict[str, Any]:
    record = {"at": now_iso(), **record}
    setattr(thread, FIELD, [*records(thread), record])
    return record


def current_turn(thread: Any) -> tuple[str | None, str | None]:
    """(id of the user message that started the current turn, id of the newest
    assistant message) of a live conversation."""
    turn = message = None
    for item in reversed(thread.messages):
        if message is None and isinstance(item, AssistantMessage):
            message = item.id
        if isinstance(item, UserMessage):
            turn = item.id
            break
    return turn, message


class Checkpointer:
    """Snapshots for one project; the thread records live on each session's thread.
    (`session` arguments are the running Session, typed loosely: the session's helpers
    never import it, so there is no import circle.)"""

    def __init__(self, store: CheckpointStore) -> None:
        self.store = store
        self._warned = False

    async def before_tool(self, session: Any, call: ToolCall) -> None:
        snap = await self._snapshot(session, f"before {call.tool_name}")
        if snap is None:
            return
        turn, message = current_turn(session.thread)
        add_record(
            session.thread,
            {
                "kind": "before_tool",
                "commit": snap.commit,
                "turn_id": turn,
                "message_id": message,
                "call_id": call.id,
                "tool": call.tool_name,
            },
        )
        session.request_save()

    async def after_turn(self, session: Any) -> tuple[str | None, str] | None:
        """The files as the turn left them (what undo compares hand edits against).
        Returns (turn id, the turn's first checkpoint) when the turn took checkpoints."""
        turn, _ = current_turn(session.thread)
        mine = [r for r in records(session.thread) if r.get("turn_id") == turn]
        first = next((r for r in mine if r.get("kind") == "before_tool"), None)
        if first is None:
            return None
        snap = await self._snapshot(session, "end of turn")
        if snap is None:
            return None
        add_record(session.thread, {"kind": "turn_end", "commit": snap.commit, "turn_id": turn})
        session.request_save()
        return turn, first["commit"]

    async def snapshot_now(self, label: str) -> Any:
        return await asyncio.to_thread(self.store.snapshot, label)

    async def _snapshot(self, session: Any, label: str) -> Any:
        try:
            return await asyncio.to_thread(self.store.snapshot, label)
        except Exception as exc:  # a checkpoint must never stop the agent
            log.warning("checkpoint failed in %s: %s", self.store.project_root, exc)
            if not self._warned:
                self._warned = True
                session.publish(
                    SessionError(
                        session_id=session.id,
                        origin="Io",
                        message=f"could not take a checkpoint ({exc}); the agent goes on, "
                        "but /undo cannot restore this step",
                    )
                )
            return None


def checkpointer_for(project_root: Any, config: Any, data_dir: Any = None) -> Checkpointer | None:
    """The project's checkpointer as configured ([checkpoints] enabled), or None."""
    section = getattr(config, "checkpoints", None)
    if section is not None and not section.enabled:
        return None
    from loom.checkpoints import CheckpointStore

    if data_dir is None:
        from loom.paths import LoomPaths

        data_dir = LoomPaths.from_env().data
    store = CheckpointStore.for_project(project_root, data_dir, config)
    if section is not None:
        from loom.checkpoints.maintenance import maybe_auto_gc

        maybe_auto_gc(store, section.keep_days)
    return Checkpointer(store)
