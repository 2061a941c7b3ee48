"""Lifecycle hooks: commands the person configures around every step of a session, with
Claude Code's event names and contract so existing hook scripts port as they are.

    [[hooks.PreToolUse]]
    matcher = "shell|file_write"    # a regex the whole tool name must match
    command = "~/bin/check-tool"   # gets the event as JSON on stdin
    timeout = 30                   # seconds (60 by default)

`LifecycleHooks` holds a session's hooks and fires one event (`lifecycle.py`); a
command runs with bounded output and a timeout (`run.py`); what the hooks decided is
read from exit codes and JSON output (`outcome.py`). Where each event fires is
loom.session's business (its hook points).
"""

from loom.hooks.lifecycle import EVENTS, MATCHED_BY, Hook, LifecycleHooks
from loom.hooks.outcome import HookOutcome, interpret
from loom.hooks.run import MAX_OUTPUT_BYTES, HookRun, run_hook

__all__ = [
    "EVENTS",
    "MATCHED_BY",
    "MAX_OUTPUT_BYTES",
    "Hook",
    "HookOutcome",
    "HookRun",
    "LifecycleHooks",
    "interpret",
    "run_hook",
]
