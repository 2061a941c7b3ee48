"""The REPL's /undo, /redo and /rewind (and /compact): what they ask and what they print.

`chat.py` dispatches here (`SLASH_COMMANDS`); the work is done by the session API
(loom.session.helpers.undo), the same calls the web page and ACP use.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Any, Literal

from loom.cli.permission_keys import Dialog, read_answer

if TYPE_CHECKING:
    from loom.session import Session

SLASH_COMMANDS = ("/undo", "/redo", "/rewind", "/compact")
HELP = {  # for /help, in the same columns as the other commands
    "/undo": "restore the files to before the agent's last turn that changed them",
    "/redo": "put back what /undo took away",
    "/rewind": "pick a turn: restore the code, the conversation, or both to before it",
    "/compact": "[focus]  summarise older turns now to free context (focus: what to keep)",
}
RESTORE_KEYS = {"b": "both", "c": "code", "o": "conversation"}
ONE_KEY_TURNS = 9  # up to this many turns one digit picks one


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
    dialog = Dialog()
    picked = await _pick_turn(repl, len(turns), dialog)
    if picked is None:
        return
    turn = turns[picked - 1]
    what = await read_answer(
        "Restore [b]oth, [c]ode only or c[o]nversation only? [b] ",
        RESTORE_KEYS,
        interactive=repl.interactive,
        dialog=dialog,
        enter="both",
    )
    if what not in RESTORE_KEYS.values():  # Esc, Ctrl-C, Ctrl-D
        repl.renderer.line("rewind cancelled; nothing was changed", style="dim")
        return
    repl.renderer.line(f"  → {what}", style="dim")
    code = what in ("both", "code")
    conversation = what in ("both", "conversation")
    message_id = turn.message.id or ""
    try:
        outcome = await rewind_in_session(session, message_id, code=code, conversation=conversation)
    except HandEdited as exc:
        if not await _confirm_overwrite(repl, exc.paths, dialog):
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


async def _pick_turn(repl: Any, count: int, dialog: Dialog) -> int | None:
    """The turn to rewind to (None: cancelled): up to ONE_KEY_TURNS turns a digit answers,
    as at a permission question; more need a number and Enter."""
    if count > ONE_KEY_TURNS:
        question = f"Rewind to before which turn? (1-{count}, Enter to cancel) "
        answer = (await ask(repl, question)).strip()
        if answer and (not answer.isdigit() or not 1 <= int(answer) <= count):
            repl.renderer.line(f"/rewind: pick a number from 1 to {count}", style="yellow")
            return None
        return int(answer) if answer else None
    keys = {str(number): str(number) for number in range(1, count + 1)}
    answer = await read_answer(
        f"Rewind to before which turn? (1-{count}; Enter or Esc cancels) ",
        keys,
        interactive=repl.interactive,
        dialog=dialog,
        enter="cancel",
    )
    if answer not in keys:
        return None
    repl.renderer.line(f"  → turn {answer}", style="dim")
    return int(answer)


async def _confirm_overwrite(repl: Any, paths: list[str], dialog: Dialog | None = None) -> bool:
    repl.renderer.line("These files were changed by hand since the agent's turn:", style="yellow")
    for path in paths:
        repl.renderer.line(f"  {path}", style="yellow")
    answer = await read_answer(
        "Overwrite them? [y/N] ",
        {"y": "yes", "n": "no"},
        interactive=repl.interactive,
        dialog=dialog or Dialog(),
        enter="no",
    )
    return answer == "yes"


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
