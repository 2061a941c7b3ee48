"""Typed text arriving faster than a person types, inserted in one go.

A terminal without bracketed paste (or `tmux send-keys`, `screen`) hands a paste to the
prompt as one key press per character. prompt_toolkit inserts each into a new copy of the
whole line: quadratic, so a 100 KB paste took minutes, gigabytes, and Ctrl-C waited behind
it (issue 26). When a printable key arrives, the printable keys already queued behind it are
taken along and inserted with it; anything else (Enter, Ctrl-C, an escape sequence) stays
queued and is handled as usual.
"""

from __future__ import annotations

from typing import Any


def _printable(press: Any) -> bool:
    key = press.key
    return isinstance(key, str) and len(key) == 1 and key == press.data and key.isprintable()


def queued_text(event: Any) -> str:
    """The key's text plus the printable keys queued right behind it (taken off the queue)."""
    queue = event.app.key_processor.input_queue
    parts = [event.data * event.arg]
    while queue and _printable(queue[0]):
        parts.append(queue.popleft().data)
    return "".join(parts)


def paste_bindings() -> Any:
    """Key bindings for the REPL's prompt: printable keys inserted in runs."""
    from prompt_toolkit.filters.app import emacs_insert_mode, vi_insert_mode
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.keys import Keys

    bindings = KeyBindings()

    @bindings.add(Keys.Any, filter=emacs_insert_mode | vi_insert_mode)
    def _insert(event: Any) -> None:
        event.current_buffer.insert_text(queued_text(event))

    return bindings
