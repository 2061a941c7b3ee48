"""The names of the permission modes (Claude Code's), for every floor and face: what
each mode lets run is decided in loom.permissions (modes.py, policy.py)."""

from __future__ import annotations

from typing import Literal

PermissionMode = Literal["default", "acceptEdits", "plan", "bypassPermissions"]
PERMISSION_MODES: tuple[PermissionMode, ...] = (
    "default",
    "acceptEdits",
    "plan",
    "bypassPermissions",
)


def parse_permission_mode(text: str) -> PermissionMode:
    """The mode named by `text` (exact name, or any case); ValueError that lists them."""
    for mode in PERMISSION_MODES:
        if text == mode or text.strip().lower() == mode.lower():
            return mode
    names = ", ".join(PERMISSION_MODES)
    raise ValueError(f"unknown permission mode {text!r}; use one of: {names}")


# What Shift-Tab cycles through, as in Claude Code: bypassPermissions is never reached by
# a key press (only by --yes or naming it), and from it the cycle starts over.
CYCLE: tuple[PermissionMode, ...] = ("default", "acceptEdits", "plan")


def next_permission_mode(mode: str) -> PermissionMode:
    """The mode after `mode` in the cycle (Shift-Tab in the REPL)."""
    if mode not in CYCLE:
        return "default"
    return CYCLE[(CYCLE.index(mode) + 1) % len(CYCLE)]
