"""Architect plans: the strong model's structured plan, parsed robustly.

The architect is asked for JSON like

    {"summary": "...", "steps": [{"file": "src/auth.py", "action": "edit",
                                   "description": "wrap the login call in try/except"}]}

Models wrap JSON in prose or code fences, or return a bare list of steps; all of that is
accepted. Anything else raises `PlanError` whose message tells the model exactly how to
answer, so the session can send it back and ask again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from loom.core.jsonish import is_json_list, is_json_object

ACTIONS = ("create", "edit", "delete", "read", "run")

PLAN_FORMAT = (
    'Reply with only a JSON object: {"summary": "<one line>", "steps": [{"file": '
    '"<path relative to the project root>", "action": "create|edit|delete|read|run", '
    '"description": "<what to change and why, specific enough for another engineer>"}]}'
)


class PlanError(ValueError):
    """The architect's answer is not a usable plan; the message is for the model."""


@dataclass(frozen=True)
class PlanStep:
    file: str
    action: str
    description: str

    def to_dict(self) -> dict[str, str]:
        return {"file": self.file, "action": self.action, "description": self.description}


@dataclass(frozen=True)
class Plan:
    summary: str
    steps: tuple[PlanStep, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"summary": self.summary, "steps": [s.to_dict() for s in self.steps]}

    def describe(self) -> str:
        lines = [self.summary] if self.summary else []
        for number, step in enumerate(self.steps, 1):
            lines.append(f"{number}. [{step.action}] {step.file}: {step.description}")
        return "\n".join(lines)


def parse_plan(text: str, *, max_steps: int = 50) -> Plan:
    data = _find_json(text)
    if is_json_list(data):
        data = {"summary": "", "steps": data}
    if not is_json_object(data):
        raise PlanError(
            f"Your plan must be a JSON object, not {type(data).__name__}. {PLAN_FORMAT}"
        )
    steps_raw = data.get("steps")
    if not is_json_list(steps_raw) or not steps_raw:
        raise PlanError(f'Your plan has no "steps" list (or it is empty). {PLAN_FORMAT}')
    if len(steps_raw) > max_steps:
        raise PlanError(
            f"Your plan has {len(steps_raw)} steps; at most {max_steps} are allowed. "
            "Merge small steps. " + PLAN_FORMAT
        )
    steps = [_step(number, raw) for number, raw in enumerate(steps_raw, 1)]
    summary = data.get("summary") or data.get("title") or ""
    return Plan(str(summary).strip(), tuple(steps))


def _step(number: int, raw: object) -> PlanStep:
    if not is_json_object(raw):
        raise PlanError(
            f"Step {number} must be an object with file, action and description. {PLAN_FORMAT}"
        )
    file = raw.get("file") or raw.get("path") or ""
    description = raw.get("description") or raw.get("details") or ""
    action = str(raw.get("action") or "edit").strip().lower()
    if not isinstance(file, str) or not isinstance(description, str) or not description.strip():
        raise PlanError(
            f'Step {number} needs a "description" string (and a "file" path string). {PLAN_FORMAT}'
        )
    if action not in ACTIONS:
        raise PlanError(
            f"Step {number} has action {action!r}; use one of {', '.join(ACTIONS)}. {PLAN_FORMAT}"
        )
    return PlanStep(file.strip(), action, description.strip())


def _find_json(text: str) -> object:
    """The first JSON object or array in `text` (inside code fences or prose)."""
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except ValueError:
        pass
    decoder = json.JSONDecoder()
    last_error = "no JSON object found"
    for index, char in enumerate(stripped):
        if char not in "{[":
            continue
        try:
            value, _ = decoder.raw_decode(stripped, index)
        except ValueError as exc:
            last_error = str(exc)
            continue
        if is_json_object(value) or is_json_list(value):
            return value
    raise PlanError(f"Your plan is not valid JSON ({last_error}). {PLAN_FORMAT}")
