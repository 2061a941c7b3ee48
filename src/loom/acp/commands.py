"""Loom's slash commands in an ACP editor: `/undo`, `/redo` (files the agent changed in
its last turn, back or again), `/compact [focus]`, `/context` (where the window goes) and
`/shells [kill ID]` (the background commands). The editor lists them (the
`available_commands_update`); a prompt that starts with one runs it instead of a turn.
Files edited by hand since the agent's turn are only overwritten after the person says
so, through the editor's permission question."""

from __future__ import annotations

from typing import Any

from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    PermissionOption,
    ToolCallUpdate,
    UnstructuredCommandInput,
)

from acp import helpers

COMMANDS = {
    "undo": "Put back the files the agent changed in its last turn",
    "redo": "Reapply what /undo took back",
    "compact": "Summarise the older turns now, to free the context (optional: focus words)",
    "context": "Where the context window goes: system, tools, instructions, map, messages",
    "shells": "The agent's background commands (kill ID ends one)",
}
HINTS = {"compact": "focus words", "shells": "kill ID"}
OVERWRITE = [
    PermissionOption(option_id="overwrite", name="Overwrite my edits", kind="allow_once"),
    PermissionOption(option_id="keep", name="Keep my edits", kind="reject_once"),
]


def available_commands() -> Any:
    return helpers.update_available_commands(
        [
            AvailableCommand(
                name=name,
                description=description,
                input=AvailableCommandInput(root=UnstructuredCommandInput(hint=HINTS[name]))
                if name in HINTS
                else None,
            )
            for name, description in COMMANDS.items()
        ]
    )


def parse(text: str) -> tuple[str, str] | None:
    """("undo", "") for "/undo"; None when the prompt is not one of Loom's commands."""
    stripped = text.strip()
    if not stripped.startswith("/"):
        return None
    name, _, rest = stripped[1:].partition(" ")
    return (name, rest.strip()) if name in COMMANDS else None


async def run(live: Any, name: str, argument: str) -> str:
    """Run a command on a live ACP session; returns what to tell the person."""
    from loom.session import LoomError

    try:
        if name == "compact":
            from loom.session import compact_now

            view = await compact_now(live.session, argument)
            count = view.start if view is not None else 0
            return f"Compacted {count} older message(s) into a summary; the thread keeps them."
        if name == "context":
            return context_text(await live.session.context_view())
        if name == "shells":
            return await _shells(live.session, argument)
        return await _restore(live, name)
    except LoomError as exc:
        return f"{exc}."


def context_text(view: Any) -> str:
    lines = [f"Context window of {view.model}: {view.window:,} tokens"]
    lines += [
        f"- {part.label}: {part.tokens:,} ({view.percent(part)}%)"
        for part in view.parts
        if part.tokens or part.key in ("messages", "free")
    ]
    if view.suggestion:
        lines.append(f"Suggestion: {view.suggestion}")
    return "\n".join(lines)


async def _shells(session: Any, argument: str) -> str:
    words = argument.split()
    if words[:1] == ["kill"] and len(words) == 2:
        try:
            return await session.kill_background(words[1])
        except ValueError as exc:
            return f"{exc}."
    found = session.background_commands()
    if not found:
        return "No background commands in this session."
    return "\n".join(
        f"- {job.id} {job.state}{'' if job.exit_code is None else f' ({job.exit_code})'}, "
        f"{int(job.running_s)} s: {job.command}"
        for job in found
    )


async def _restore(live: Any, action: str) -> str:
    from loom.session import HandEdited, restore_in_session

    try:
        report = await restore_in_session(live.session, action)  # type: ignore[arg-type]
    except HandEdited as exc:
        answer = await live.client.request_permission(
            session_id=live.id,
            tool_call=ToolCallUpdate(
                tool_call_id=f"{action}-overwrite",
                title=f"/{action} would overwrite files edited by hand",
                kind="edit",
                status="pending",
                content=[helpers.tool_content(helpers.text_block("\n".join(exc.paths)))],
            ),
            options=OVERWRITE,
        )
        outcome = answer.outcome
        if outcome.outcome != "selected" or outcome.option_id != "overwrite":
            return f"Nothing changed: your edits to {', '.join(exc.paths)} are kept."
        report = await restore_in_session(live.session, action, force=True)  # type: ignore[arg-type]
    paths = report.paths
    if not paths:
        return f"/{action}: no file needed changing."
    shown = "\n".join(f"- {p}" for p in paths[:30])
    more = f"\n… and {len(paths) - 30} more" if len(paths) > 30 else ""
    verb = "Restored" if action == "undo" else "Reapplied"
    return f"{verb} {len(paths)} file(s):\n{shown}{more}"
