"""Permission modes, with Claude Code's names: what a session lets run unasked.

- `default`: the rules in `policy.py` as they are.
- `acceptEdits`: file edits inside the project run unasked; commands still ask.
- `plan`: only read-only tools run (and read-only shell commands, `read_only.py`); every
  other call is refused with a note telling the model it is planning.
- `bypassPermissions`: every tool runs unasked (`--yes`), but the dangerous floor and
  protected files still ask.
"""

from __future__ import annotations

from loom.core.permission_modes import (
    PERMISSION_MODES,
    PermissionMode,
    next_permission_mode,
    parse_permission_mode,
)

__all__ = [
    "PERMISSION_MODES",
    "PLAN_APPROVED",
    "PLAN_NOTE",
    "PLAN_REFUSAL",
    "PermissionMode",
    "next_permission_mode",
    "parse_permission_mode",
]

PLAN_REFUSAL = (
    "refused: the session is in plan mode, so nothing may change yet (no edits, writes or "
    "commands that change things). Keep planning: read what you need, then write the plan "
    "as the todo list with todo_write and end your turn; the person approves it before "
    "anything runs"
)

PLAN_NOTE = (
    "[plan mode]\nThe person wants a plan first: do not change anything yet (edits, writes "
    "and commands that change things are refused). Read and search what you need, then "
    "write your plan as the todo list with todo_write, one step per item, and end your "
    "turn with a short summary. The person approves the plan before you carry it out."
)

PLAN_APPROVED = (
    "The plan is approved and plan mode is over: carry it out now, step by step, keeping "
    "the todo list up to date."
)
