"""The REPL's /undo, /redo and /rewind (and /compact): what they ask and what they print.

`chat.py` dispatches here (`SLASH_COMMANDS`); the work is done by the session API
(loom.session.helpers.undo), the same calls the web page and ACP use.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from loom.session import Session

SLASH_COMMANDS = ("/undo", "/redo", "/rewind", "/compact")
HELP = {  # for /help, in the same columns as the other commands
    "/undo": "restore the files to before the agent's last turn that changed them",
    "/redo": "put back what /undo took away",
    "/rewind": "pick a turn: restore the code, the conversation, or both to before it",
    "/compact": "[focus]  summarise older turns now to free context (focus: what to keep)",
}


async def run_slash(repl: Any, name: str, arg: str) -> None:
    session = repl.session
    try:
        if name == "/undo":
            await _restore(repl, session, "undo")
        elif name == "/redo":
            await _restore(repl, session, "redo")
        elif name == "/rewind":
            await _rewind(repl, session)
        elif name == "/compact":
            from loom.session import compact_now

            await compact_now(session, focus=arg)
    except Exception as exc:  # CheckpointError, NothingToRestore: a message for the person
        repl.renderer.line(f"{name}: {' '.join(str(exc).split())}", style="yellow")


async def _restore(repl: Any, session: Session, action: Literal["undo", "redo"]) -> None:
    from loom.session import HandEdited, restore_in_session

    try:
        report = await restore_in_session(session, action)
    except HandEdited as exc:
        if not await _confirm_overwrite(repl, exc.paths):
            repl.renderer.line(f"{action} cancelled; nothing was changed", style="dim")
            return
        report = await restore_in_session(session, action, force=True)
    print_restore(repl, report)


async def _rewind(repl: Any, session: Session) -> None:
    from loom.session import HandEdited, list_user_turns, rewind_in_session

    turns = list_user_turns(session)
    if not turns:
        repl.renderer.line("/rewind: no user turns yet", style="dim")
        return
    for number, turn in enumerate(turns, 1):
        typed = turn.message.content.split("\n\n<file path=")[0].split("\n\n<directory path=")[0]
        first = " ".join(typed.split())[:70]  # without @-mention attachments
        marks = " [files changed]" if turn.has_checkpoint and not turn.undone else ""
        repl.renderer.line(f"  {number}. {first}{marks}")
    answer = (await ask(repl, "Rewind to before which turn? (number, Enter to cancel) ")).strip()
    if not answer:
        return
    if not answer.isdigit() or not 1 <= int(answer) <= len(turns):
        repl.renderer.line(f"/rewind: pick a number from 1 to {len(turns)}", style="yellow")
        return
    turn = turns[int(answer) - 1]
    what = (await ask(repl, "Restore [b]oth, [c]ode only or c[o]nversation only? [b] ")).strip()
    code = what.lower() in ("", "b", "c")
    conversation = what.lower() in ("", "b", "o")
    if not (code or conversation):
        repl.renderer.line("/rewind: answer b, c or o", style="yellow")
        return
    message_id = turn.message.id or ""
    try:
        outcome = await rewind_in_session(session, message_id, code=code, conversation=conversation)
    except HandEdited as exc:
        if not await _confirm_overwrite(repl, exc.paths):
            repl.renderer.line("rewind cancelled; nothing was changed", style="dim")
            return
        outcome = await rewind_in_session(
            session, message_id, code=code, conversation=conversation, force=True
        )
    if outcome.code is not None:
        print_restore(repl, outcome.code)
    elif code:
        repl.renderer.line("no files to restore: no turn from there on changed any", style="dim")
    if outcome.hidden_messages:
        repl.renderer.line(
            f"{outcome.hidden_messages} message(s) set aside: the model no longer sees them "
            "(the thread keeps them; `loom show --all` lists them)",
            style="dim",
        )


async def _confirm_overwrite(repl: Any, paths: list[str]) -> bool:
    repl.renderer.line("These files were changed by hand since the agent's turn:", style="yellow")
    for path in paths:
        repl.renderer.line(f"  {path}", style="yellow")
    answer = await ask(repl, "Overwrite them? [y/N] ")
    return answer.strip().lower() in ("y", "yes")


def print_restore(repl: Any, report: Any) -> None:
    verb = {"undo": "Undid", "redo": "Redid", "rewind": "Rewound"}[report.action]
    result = report.result
    repl.renderer.line(f"{verb}: {len(result.paths)} file(s) restored", style="magenta")
    for mark, paths in (("M", result.changed), ("A", result.created), ("D", result.removed)):
        for path in paths:
            repl.renderer.line(f"  {mark} {path}")


async def ask(repl: Any, question: str) -> str:
    if repl.prompt is not None:
        try:
            return await repl.prompt.prompt_async(question)
        except (EOFError, KeyboardInterrupt):
            return ""
    repl.renderer.line(question)
    line = await asyncio.to_thread(sys.stdin.readline)
    return line
