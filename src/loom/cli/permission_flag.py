"""`--permission-mode` on `loom`, `loom run` and `loom resume`: Claude Code's names
(loom.core.permission_modes); `--yes` stays as bypassPermissions."""

from __future__ import annotations

from typing import Any

import typer

from loom.core.permission_modes import PERMISSION_MODES, parse_permission_mode

HELP = (
    f"{' | '.join(PERMISSION_MODES)}: default asks as configured; acceptEdits runs file "
    "edits in the project unasked; plan only reads until you approve the plan; "
    "bypassPermissions is --yes."
)


def check(value: str | None) -> str | None:
    """Typer's callback: the mode's exact name, or a usage error that lists them."""
    if value is None:
        return None
    try:
        return parse_permission_mode(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--permission-mode") from exc


def option() -> Any:  # typer's OptionInfo, typed as the parameter it fills
    return typer.Option(None, "--permission-mode", help=HELP, callback=check)


def resolved(mode: str | None, yes: bool) -> str:
    """The session's mode: --yes is bypassPermissions, else the flag, else default."""
    if yes:
        return "bypassPermissions"
    return mode or "default"
