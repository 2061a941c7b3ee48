"""Where a session fires its lifecycle hooks (loom.hooks), and what it does with them.

| event            | when                                   | what the hooks can do            |
| SessionStart     | the session starts (joined before its  | stdout / additionalContext: text |
|                  | first model call)                      | added to the system prompt       |
| UserPromptSubmit | a person's message, before the model   | block it; add context to it      |
| PreToolUse       | before a tool call's permission check  | refuse it (the model reads why), |
|                  |                                        | allow / ask, change its input    |
| PostToolUse      | after a call ran                       | feedback added to the result     |
| Stop             | the agent finished its answer          | make the turn go on with a text  |
| SubagentStop     | the same, for a sub-agent              | the same                         |
|                  | (a sub-agent fires no SessionStart,    |                                  |
|                  | SessionEnd or UserPromptSubmit)        |                                  |
| PreCompact       | before old turns are summarised        | (nothing to decide)              |
| Notification     | Loom waits for a permission answer     | (nothing to decide)              |
| SessionEnd       | the session stops                      | (nothing to decide)              |

Warnings (a hook failed, timed out, printed too much) and `systemMessage`s reach the
person as `notice` events; a hook never stops the session.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom.core.events import Notice

if TYPE_CHECKING:
    from loom.core.messages import ToolCall
    from loom.hooks import HookOutcome, LifecycleHooks

MAX_STOP_CONTINUATIONS = 8  # a Stop hook that always blocks cannot keep a turn alive forever


class SessionHooks:
    def __init__(self, session: Any, hooks: LifecycleHooks) -> None:
        self.session = session
        self.hooks = hooks
        self._start: asyncio.Task[str] | None = None
        self._start_context = ""
        self._background: set[asyncio.Task[Any]] = set()

    @property
    def is_child(self) -> bool:
        return bool(getattr(self.session.thread, "parent_thread_id", None))

    def _common(self) -> dict[str, Any]:
        session = self.session
        path_for = getattr(session.store, "path_for", None)
        transcript = ""
        if callable(path_for):
            with contextlib.suppress(Exception):
                transcript = str(path_for(session.thread.id))
        return {
            "session_id": session.id,
            "cwd": str(session.options.cwd or session.project_root),
            "transcript_path": transcript,
        }

    def _env(self) -> dict[str, str]:
        root = str(self.session.project_root)
        # CLAUDE_PROJECT_DIR too, so hook scripts written for Claude Code run unchanged
        return {"LOOM_PROJECT_DIR": root, "CLAUDE_PROJECT_DIR": root}

    async def fire(
        self, event: str, fields: dict[str, Any], subject: str | None = None
    ) -> HookOutcome:
        outcome = await self.hooks.fire(
            event,
            {**self._common(), **fields},
            cwd=Path(self.session.options.cwd or self.session.project_root),
            subject=subject,
            env=self._env(),
        )
        for text in outcome.notices:  # each names its hook already ("PreToolUse hook `x` ...")
            self.session.publish(
                Notice(session_id=self.session.id, level="warning", source="", text=text)
            )
        return outcome

    # -- session start and end --------------------------------------------------------

    def session_start(self, source: str) -> None:
        """Fire SessionStart in the background; `start_context()` joins it. A
        sub-agent is part of its parent's session: no SessionStart of its own."""
        if self.is_child:
            return
        if self.hooks.wants("SessionStart", source) and self._start is None:
            self._start = asyncio.get_running_loop().create_task(self._run_start(source))

    async def _run_start(self, source: str) -> str:
        outcome = await self.fire("SessionStart", {"source": source}, subject=source)
        return outcome.context_text

    async def start_context(self) -> str:
        """The SessionStart hooks' context ("" when none), once they have finished."""
        if self._start is not None:
            task, self._start = self._start, None
            self._start_context = await task
        return self._start_context

    async def session_end(self, reason: str) -> None:
        if self._start is not None:
            self._start.cancel()
        for task in list(self._background):
            task.cancel()
        if self.is_child:
            return  # its parent's session goes on
        if self.hooks.wants("SessionEnd"):
            await self.fire("SessionEnd", {"reason": reason})

    # -- a person's message -----------------------------------------------------------

    async def user_prompt(self, prompt: str) -> HookOutcome | None:
        """A person's message; a sub-agent's brief is not one (no hook runs on it)."""
        if self.is_child or not self.hooks.wants("UserPromptSubmit"):
            return None
        return await self.fire("UserPromptSubmit", {"prompt": prompt})

    # -- tool calls -------------------------------------------------------------------

    async def pre_tool_use(self, call: ToolCall) -> HookOutcome | None:
        if not self.hooks.wants("PreToolUse", call.tool_name):
            return None
        fields = {"tool_name": call.tool_name, "tool_input": call.arguments_json,
                  "tool_use_id": call.id}  # fmt: skip
        return await self.fire("PreToolUse", fields, subject=call.tool_name)

    async def post_tool_use(self, call: ToolCall, content: str, is_error: bool) -> str:
        """Text to add to the call's result for the model ("" when none)."""
        if not self.hooks.wants("PostToolUse", call.tool_name):
            return ""
        fields = {
            "tool_name": call.tool_name,
            "tool_input": call.arguments_json,
            "tool_response": {"content": content, "is_error": is_error},
            "tool_use_id": call.id,
        }
        outcome = await self.fire("PostToolUse", fields, subject=call.tool_name)
        notes = [outcome.reason if outcome.blocked else "", outcome.context_text]
        if outcome.stop is not None:
            notes.append(_stop_note(outcome.stop))
        text = "\n".join(note for note in notes if note)
        return f"[PostToolUse hook]\n{text}" if text else ""

    # -- the end of an answer ---------------------------------------------------------

    async def stop(self, answer: str, continuations: int) -> str | None:
        """The text the turn goes on with when a Stop (SubagentStop for a sub-agent)
        hook blocks; None when the agent may stop."""
        event = "SubagentStop" if self.is_child else "Stop"
        if not self.hooks.wants(event):
            return None
        if continuations >= MAX_STOP_CONTINUATIONS:  # said, not silently dropped
            self.session.publish(Notice(
                session_id=self.session.id, level="warning", source=f"{event} hook",
                text=f"it kept the turn going {continuations} times; Loom let the agent stop "
                "here (check the hook: it should let the turn end once its condition holds)",
            ))  # fmt: skip
            return None
        fields = {"stop_hook_active": continuations > 0, "last_assistant_message": answer}
        outcome = await self.fire(event, fields)
        if not outcome.blocked or outcome.stop is not None:
            return None
        return outcome.reason or f"A {event} hook asked you to go on."

    # -- compaction, notifications ----------------------------------------------------

    async def pre_compact(self, trigger: str, focus: str) -> None:
        if self.hooks.wants("PreCompact", trigger):
            await self.fire("PreCompact", {"trigger": trigger, "custom_instructions": focus},
                            subject=trigger)  # fmt: skip

    def notify(self, message: str) -> None:
        """Fire Notification without waiting for it (the question is shown meanwhile)."""
        if not self.hooks.wants("Notification"):
            return
        fired = self.fire("Notification", {"message": message})
        task = asyncio.get_running_loop().create_task(fired)
        self._background.add(task)
        task.add_done_callback(self._background.discard)


def _stop_note(reason: str) -> str:
    said = f" ({reason})" if reason else ""
    return f"A hook asked to stop{said}: finish now and tell the person where things stand."


def refusal_text(outcome: HookOutcome) -> str:
    """A PreToolUse refusal as the model reads it."""
    reason = outcome.reason or "a PreToolUse hook refused this call"
    text = f"Refused by a PreToolUse hook: {reason}"
    if outcome.stop is not None:
        text += "\n" + _stop_note(outcome.stop)
    return text
