"""The open block of a streamed answer, shown as plain text while it arrives.

`MarkdownStream` renders a block only once it is finished; a long paragraph would show
nothing until its end. The REPL writes the open block's text as it comes (control
characters shown as escapes, tabs as spaces), then, when the block is finished, erases
those rows and prints the rendered Markdown in their place. Rows are counted from the text and the
terminal's width; a block taller than the screen (its top scrolled away) is not erased:
it stays as the plain text that was shown.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable

from rich.cells import cell_len

from loom.core.text import visible_block


def plain(text: str) -> str:
    """Text safe to write to a terminal: escape sequences and carriage returns shown as
    escapes (`\\x1b`), tabs as spaces (so rows can be counted)."""
    return visible_block(text.replace("\t", "    "))


def rows_above_cursor(text: str, width: int) -> int:
    """How many rows above the cursor `text` starts, written from a line's start on a
    terminal `width` columns wide (that wraps long lines)."""
    width = max(width, 1)
    *full, last = text.split("\n")
    rows = sum(max(1, -(-cell_len(line) // width)) for line in full)
    last_len = cell_len(last)
    return rows + ((last_len - 1) // width if last_len else 0)


class OpenBlockEcho:
    def __init__(self, write: Callable[[str], None]) -> None:
        self._write = write  # writes to the terminal, as is
        self._shown = ""  # what was written for the open block

    @property
    def active(self) -> bool:
        return bool(self._shown)

    def show(self, text: str) -> None:
        """The open block is now `text` (it only grows while the block is open)."""
        text = plain(text)
        if not text.startswith(self._shown):
            self.erase()
        added = text[len(self._shown) :]
        if added:
            self._write(added)
            self._shown += added

    def erase(self) -> bool:
        """Remove the rows written; False (and nothing erased) when they do not all fit
        on the screen any more."""
        shown, self._shown = self._shown, ""
        if not shown:
            return True
        columns, lines = shutil.get_terminal_size((80, 24))
        up = rows_above_cursor(shown, columns)
        if up >= lines - 1:
            self._write("\n")
            return False
        self._write((f"\x1b[{up}A" if up else "") + "\r\x1b[J")
        return True
