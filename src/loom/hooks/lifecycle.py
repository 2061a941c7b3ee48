"""The configured lifecycle hooks of a session, and firing one event.

    hooks = LifecycleHooks.from_config(config.hooks)
    if hooks.wants("PreToolUse", "shell"):
        outcome = await hooks.fire("PreToolUse", payload, subject="shell", cwd=root)

`payload` is the event's own fields (`tool_name`, `tool_input`, `prompt`, ...); the
common ones (`hook_event_name`, `session_id`, `cwd`, `transcript_path`) are the
caller's to add (loom.session's hook points do). Every hook whose matcher fits runs at
the same time; their answers are combined (`loom.hooks.outcome`).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loom.hooks.outcome import HookOutcome, interpret
from loom.hooks.run import run_hook

EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "Notification",
)
# what a matcher is matched against: the tool's name, how the session started, what
# started a compaction; the other events run every hook (a matcher there is ignored)
MATCHED_BY = {
    "PreToolUse": "tool_name",
    "PostToolUse": "tool_name",
    "SessionStart": "source",
    "PreCompact": "trigger",
}


@dataclass(frozen=True)
class Hook:
    command: str
    matcher: re.Pattern[str] | None  # None: every subject
    timeout: float

    def matches(self, subject: str | None) -> bool:
        if self.matcher is None or subject is None:
            return True
        return self.matcher.fullmatch(subject) is not None


class LifecycleHooks:
    def __init__(self, hooks: Mapping[str, Sequence[Hook]] | None = None) -> None:
        self._hooks = {event: list(found) for event, found in (hooks or {}).items() if found}

    @classmethod
    def from_config(cls, section: Any) -> LifecycleHooks:
        """From a `[hooks]` section (loom.config.HooksSection); matchers were checked
        when the configuration was read."""
        hooks: dict[str, list[Hook]] = {}
        for event in EVENTS:
            for entry in section.commands(event):
                pattern = entry.matcher
                matcher = None if pattern in (None, "", "*") else re.compile(pattern)
                hooks.setdefault(event, []).append(Hook(entry.command, matcher, entry.timeout))
        return cls(hooks)

    def __bool__(self) -> bool:
        return bool(self._hooks)

    def events(self) -> list[str]:
        return [event for event in EVENTS if event in self._hooks]

    def wants(self, event: str, subject: str | None = None) -> bool:
        return any(hook.matches(subject) for hook in self._hooks.get(event, ()))

    async def fire(
        self,
        event: str,
        payload: dict[str, Any],
        *,
        cwd: Path,
        subject: str | None = None,
        env: dict[str, str] | None = None,
    ) -> HookOutcome:
        """Run the event's matching hooks with `payload` as JSON on stdin."""
        chosen = [hook for hook in self._hooks.get(event, ()) if hook.matches(subject)]
        if not chosen:
            return HookOutcome()
        data = json.dumps({"hook_event_name": event, **payload}, default=str).encode()
        extra = {"LOOM_HOOK_EVENT": event, **(env or {})}
        runs = await asyncio.gather(
            *(run_hook(h.command, data, cwd=cwd, timeout=h.timeout, env=extra) for h in chosen)
        )
        return interpret(event, runs)
