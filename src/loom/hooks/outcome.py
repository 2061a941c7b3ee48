"""What a lifecycle event's hooks decided, read as Claude Code documents it.

Per hook run:
- exit 0: stdout that is a JSON object is read for decisions (below); plain stdout is
  context for the model on `UserPromptSubmit` and `SessionStart`, ignored elsewhere;
- exit 2: a block. The hook's stderr is the reason: the model reads it (a refused
  `PreToolUse` call, a `Stop` that makes the turn go on, `PostToolUse` feedback); a
  blocked `UserPromptSubmit` never reaches the model. Events that cannot block
  (`SessionStart`, `SessionEnd`, `PreCompact`, `Notification`) show it to the person;
- any other exit, a timeout, a hook that could not start: a warning for the person,
  and the step goes on.

JSON fields honoured: `continue: false` (+ `stopReason`), `systemMessage` (shown to the
person), `decision: "block"` + `reason`, the older `decision: "approve"` on
`PreToolUse`, and `hookSpecificOutput` with `permissionDecision` (allow, deny, ask),
`permissionDecisionReason`, `updatedInput` and `additionalContext`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from loom.hooks.run import MAX_OUTPUT_BYTES, HookRun

BLOCKING_EVENTS = frozenset(
    {"PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStop"}
)
CONTEXT_EVENTS = frozenset({"UserPromptSubmit", "SessionStart"})  # plain stdout = context
_DECISION_RANK = {"allow": 1, "ask": 2, "deny": 3}  # the strictest answer wins


@dataclass
class HookOutcome:
    blocked: bool = False  # exit 2, decision "block", or permissionDecision "deny"
    reason: str = ""  # why, for the model (or the person, for a blocked prompt)
    decision: str | None = None  # PreToolUse: "allow" | "ask" | "deny"
    updated_input: dict[str, Any] | None = None  # PreToolUse: the call's new arguments
    context: list[str] = field(default_factory=list)  # text added for the model
    stop: str | None = None  # `continue: false`: the stopReason ("" when none given)
    notices: list[str] = field(default_factory=list)  # warnings and messages for the person

    @property
    def context_text(self) -> str:
        return "\n\n".join(part for part in self.context if part)


def interpret(event: str, runs: Sequence[HookRun]) -> HookOutcome:
    outcome = HookOutcome()
    reasons: list[str] = []
    for run in runs:
        _one(event, run, outcome, reasons)
    outcome.reason = "\n".join(reason for reason in reasons if reason)
    return outcome


def _one(event: str, run: HookRun, outcome: HookOutcome, reasons: list[str]) -> None:
    name = f"{event} hook `{_short(run.command)}`"
    if run.dropped_bytes:
        outcome.notices.append(
            f"{name} printed more than {MAX_OUTPUT_BYTES} bytes; "
            f"{run.dropped_bytes} bytes were dropped"
        )
    if run.error:
        outcome.notices.append(f"{name} {run.error}; going on without it")
        return
    if run.timed_out or run.exit_code is None:
        outcome.notices.append(f"{name} did not finish in time and was stopped; going on")
        return
    if run.exit_code == 2:
        reason = run.stderr or f"blocked by the {event} hook `{_short(run.command)}`"
        if event in BLOCKING_EVENTS:
            outcome.blocked = True
            reasons.append(reason)
            if event == "PreToolUse":
                _decide(outcome, "deny")
        else:
            outcome.notices.append(f"{name}: {run.stderr or 'exit 2'}")
        return
    if run.exit_code != 0:
        detail = run.stderr.splitlines()[0] if run.stderr else "no message"
        outcome.notices.append(f"{name} failed (exit {run.exit_code}: {detail}); going on")
        return
    data = _json_object(run.stdout)
    if data is None:
        if event in CONTEXT_EVENTS and run.stdout:
            outcome.context.append(run.stdout)
        return
    _read_json(event, data, outcome, reasons)


def _read_json(event: str, data: dict[str, Any], outcome: HookOutcome, reasons: list[str]) -> None:
    if data.get("continue") is False:
        outcome.stop = str(data.get("stopReason") or "")
    message = data.get("systemMessage")
    if isinstance(message, str) and message.strip():
        outcome.notices.append(message.strip())
    decision = data.get("decision")
    reason = data.get("reason")
    if decision == "block" and event in BLOCKING_EVENTS:
        outcome.blocked = True
        reasons.append(str(reason or f"blocked by a {event} hook"))
        if event == "PreToolUse":
            _decide(outcome, "deny")
    elif decision == "approve" and event == "PreToolUse":  # the older spelling of allow
        _decide(outcome, "allow")
    specific = data.get("hookSpecificOutput")
    if not isinstance(specific, dict):
        return
    context = specific.get("additionalContext")
    if isinstance(context, str) and context.strip():
        outcome.context.append(context.strip())
    if event != "PreToolUse":
        return
    permission = specific.get("permissionDecision")
    if permission in _DECISION_RANK:
        _decide(outcome, permission)
        why = specific.get("permissionDecisionReason")
        if permission == "deny":
            outcome.blocked = True
            reasons.append(str(why or "denied by a PreToolUse hook"))
    updated = specific.get("updatedInput")
    if isinstance(updated, dict):
        outcome.updated_input = updated


def _decide(outcome: HookOutcome, decision: str) -> None:
    if _DECISION_RANK[decision] > _DECISION_RANK.get(outcome.decision or "", 0):
        outcome.decision = decision


def _json_object(text: str) -> dict[str, Any] | None:
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _short(command: str, limit: int = 60) -> str:
    line = " ".join(command.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
