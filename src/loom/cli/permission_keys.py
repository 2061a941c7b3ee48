"""Reading one answer key at a permission question, so that no key can break the REPL.

Only `y`, `a`, `n` (either case) answer; Esc and Ctrl-D deny, Ctrl-C denies and stops the
turn. Every other key (Enter, arrows, function keys, a paste) is ignored and the question
says which keys answer. Keys that arrive in a burst (pasted text or type-ahead in one
read, with no bracketed paste) never answer: a pasted "any text" must not allow always.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Mapping
from typing import Any

# Keys typed by a person arrive tens of milliseconds apart; a paste arrives in one read.
BURST_SECONDS = 0.03
DENY = "deny"
INTERRUPT = "interrupt"  # deny, and stop the turn (Ctrl-C)


async def read_answer(
    question: str, keys: Mapping[str, str], *, interactive: bool | None = None
) -> str:
    """One of `keys`' values, `deny` or `interrupt`; never raises for a key press."""
    if interactive is None:
        interactive = sys.stdin.isatty()
    if not interactive:
        return await _read_line_answer(question, keys)
    return await _read_key_answer(question, keys)


async def _read_line_answer(question: str, keys: Mapping[str, str]) -> str:
    """Piped stdin (scripts, tests): one line; anything but a known key denies."""
    sys.stdout.write(question)
    sys.stdout.flush()
    line = await asyncio.to_thread(sys.stdin.readline)
    sys.stdout.write("\n")
    return keys.get(line.strip()[:1].lower(), DENY)


async def _read_key_answer(question: str, keys: Mapping[str, str]) -> str:
    from prompt_toolkit.application import Application
    from prompt_toolkit.formatted_text import FormattedText
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
    from prompt_toolkit.keys import Keys
    from prompt_toolkit.layout import Layout, Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    answers = "/".join(keys)
    state = {"hint": "", "last_key": 0.0}

    def in_burst(event: KeyPressEvent) -> bool:
        now = time.monotonic()
        burst = bool(event.app.key_processor.input_queue) or (
            now - state["last_key"] < BURST_SECONDS  # type: ignore[operator]
        )
        state["last_key"] = now
        return burst

    def ignore(event: KeyPressEvent, why: str = "") -> None:
        in_burst(event)
        state["hint"] = why or f"  (press {answers})"

    bindings = KeyBindings()
    bindings.add(Keys.Any)(ignore)
    bindings.add(Keys.BracketedPaste)(lambda e: ignore(e, "  (pasted text ignored)"))
    bindings.add(Keys.Enter)(lambda e: ignore(e, f"  (Enter does not answer: press {answers})"))

    def answer_with(result: str) -> Any:
        def handler(event: KeyPressEvent) -> None:
            if in_burst(event):  # part of a paste or of keys typed before the question
                state["hint"] = "  (typed-ahead keys ignored)"
            else:
                event.app.exit(result=result)

        return handler

    for key, result in keys.items():
        bindings.add(key)(answer_with(result))
        if key.upper() != key:
            bindings.add(key.upper())(answer_with(result))
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
