"""A session's permission mode at run time (loom.permissions.modes): read and switched on
the policy the session was assembled with (wrappers pass it through), and plan mode's
note on each message and its approval."""

from __future__ import annotations

from typing import Any

from loom.core.messages import Attachment
from loom.permissions.modes import (
    PLAN_APPROVED,
    PLAN_NOTE,
    PermissionMode,
    parse_permission_mode,
)


def mode_of(policy: Any) -> PermissionMode:
    """The mode of `policy`; a session without one (a test's) lets everything run."""
    if policy is None:
        return "bypassPermissions"
    mode = getattr(policy, "mode", "default")
    return parse_permission_mode(mode) if isinstance(mode, str) else "default"


def switch(policy: Any, mode: str) -> PermissionMode:
    """Set `mode` on `policy`; ValueError for an unknown name or a session without a
    policy to switch."""
    wanted = parse_permission_mode(mode)
    setter = getattr(policy, "set_mode", None)
    if setter is None:
        raise ValueError("this session has no permission policy whose mode can change")
    return setter(wanted)


def plan_note() -> Attachment:
    """The note on each message of plan mode telling the model it is planning (an
    attachment Loom adds, kept apart from the person's words)."""
    return Attachment(kind="loom", label="plan mode", text=PLAN_NOTE)


def approval_message(todos: list[Any]) -> str:
    """What the model is told when the person approves its plan."""
    steps = "\n".join(f"- {getattr(item, 'content', item)}" for item in todos)
    return f"{PLAN_APPROVED}\n\nThe plan:\n{steps}" if steps else PLAN_APPROVED
