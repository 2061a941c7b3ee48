"""Reading one answer key at a permission question, so that no key can break the REPL.

Only `y`, `a`, `n` (either case) answer; Esc and Ctrl-D deny, Ctrl-C denies and stops the
turn. Every other key (Enter, arrows, function keys, a paste) is ignored and the question
says which keys answer. Keys that arrive in a burst (pasted text or type-ahead in one
read, with no bracketed paste) never answer: a pasted "any text" must not allow always.

The other one-key questions (trust, /rewind, overwrite) are asked in a `Dialog`: there
`enter` is what Enter alone answers (their default), and a key followed by Enter (`y⏎`,
as a person used to line prompts types it) answers with the key; the dialog's next
question takes that Enter (the keys read after an answer go on to the next reader) as
the end of the last answer, not as an answer of its own.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# Keys typed by a person arrive tens of milliseconds apart; a paste arrives in one read.
BURST_SECONDS = 0.03
DENY = "deny"
INTERRUPT = "interrupt"  # deny, and stop the turn (Ctrl-C)


@dataclass
class Dialog:
    """Questions asked one after another, each answered by one key."""

    enter_owed: bool = False  # the last answer was a key whose Enter has not come yet


async def read_answer(
    question: str,
    keys: Mapping[str, str],
    *,
    interactive: bool | None = None,
    dialog: Dialog | None = None,
    enter: str | None = None,
) -> str:
    """One of `keys`' values (or `enter`'s, in a dialog), `deny` or `interrupt`; never
    raises for a key press."""
    if interactive is None:
        interactive = sys.stdin.isatty()
    if not interactive:
        return await _read_line_answer(question, keys, enter)
    return await _read_key_answer(question, keys, dialog, enter)


def ask_key(question: str, keys: Mapping[str, str], dialog: Dialog, enter: str) -> str:
    """`read_answer` for a question asked outside an event loop (before the REPL opens,
    `loom trust`); KeyboardInterrupt on Ctrl-C."""
    answer = asyncio.run(read_answer(question, keys, dialog=dialog, enter=enter))
    if answer == INTERRUPT:
        raise KeyboardInterrupt
    return answer


async def _read_line_answer(question: str, keys: Mapping[str, str], enter: str | None) -> str:
    """Piped stdin (scripts, tests): one line; anything but a known key denies."""
    sys.stdout.write(question)
    sys.stdout.flush()
    line = await asyncio.to_thread(sys.stdin.readline)
    sys.stdout.write("\n")
    if enter is not None and line and not line.strip():  # Enter alone (not the input's end)
        return enter
    return keys.get(line.strip()[:1].lower(), DENY)


async def _read_key_answer(
    question: str, keys: Mapping[str, str], dialog: Dialog | None, enter: str | None
) -> str:
    from prompt_toolkit.application import Application
    from prompt_toolkit.formatted_text import FormattedText
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
    from prompt_toolkit.keys import Keys
    from prompt_toolkit.layout import Layout, Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    answers = "/".join(keys)
    state = {"hint": "", "last_key": 0.0}
    skip_enter = [dialog is not None and dialog.enter_owed]  # the last answer's Enter
    if dialog is not None:
        dialog.enter_owed = False

    def in_burst(event: KeyPressEvent, then_enter: bool = False) -> bool:
        now = time.monotonic()
        queued = list(event.app.key_processor.input_queue)
        if then_enter and all(press.key in (Keys.Enter, Keys.ControlJ) for press in queued):
            queued = []  # `y⏎` in one read: the Enter ends the answer
        burst = bool(queued) or now - state["last_key"] < BURST_SECONDS  # type: ignore[operator]
        state["last_key"] = now
        return burst

    def ignore(event: KeyPressEvent, why: str = "") -> None:
        skip_enter[0] = False
        in_burst(event)
        state["hint"] = why or f"  (press {answers})"

    bindings = KeyBindings()
    bindings.add(Keys.Any)(ignore)
    bindings.add(Keys.BracketedPaste)(lambda e: ignore(e, "  (pasted text ignored)"))
    if enter is None:
        bindings.add(Keys.Enter)(lambda e: ignore(e, f"  (Enter does not answer: press {answers})"))

    def answer_with(result: str, by_enter: bool = False) -> Any:
        def handler(event: KeyPressEvent) -> None:
            if by_enter and skip_enter[0]:  # it ended the dialog's last answer
                skip_enter[0] = False
                in_burst(event)
                return
            skip_enter[0] = False
            if in_burst(event, then_enter=dialog is not None):  # a paste, or typed before
                state["hint"] = "  (typed-ahead keys ignored)"
                return
            if dialog is not None:  # a key: its Enter (read with it or not) is still to come
                dialog.enter_owed = not by_enter
            event.app.exit(result=result)

        return handler

    for key, result in keys.items():
        bindings.add(key)(answer_with(result))
        if key.upper() != key:
            bindings.add(key.upper())(answer_with(result))
    if enter is not None:
        bindings.add(Keys.Enter)(answer_with(enter, by_enter=True))
        bindings.add(Keys.ControlJ)(answer_with(enter, by_enter=True))  # a newline as well
    bindings.add(Keys.Escape, eager=True)(lambda e: e.app.exit(result=DENY))
    bindings.add(Keys.ControlD)(lambda e: e.app.exit(result=DENY))
    bindings.add(Keys.ControlC)(lambda e: e.app.exit(result=INTERRUPT))

    def text() -> FormattedText:
        return FormattedText([("bold", question), ("fg:ansiyellow", state["hint"])])  # type: ignore[list-item]

    app: Application[str] = Application(
        layout=Layout(
            Window(
                FormattedTextControl(text, show_cursor=True),
                dont_extend_height=True,
                wrap_lines=True,
            )
        ),
        key_bindings=bindings,
        full_screen=False,
        erase_when_done=False,
    )
    try:
        # the turn's own Ctrl-C handler stays in place: prompt_toolkit's would remove it
        # when the question closes, and a Ctrl-C during the allowed command would be lost
        # (raw mode reads Ctrl-C here as a key anyway)
        result = await app.run_async(handle_sigint=False)
    except (EOFError, KeyboardInterrupt):
        return DENY
    return result if isinstance(result, str) else DENY
