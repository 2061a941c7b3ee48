"""Markdown for a streamed answer without flicker: text is cut into finished blocks (a
paragraph ended by a blank line, a whole fenced code block) and each block is rendered
once, as `loom show` renders messages (rich Markdown, code highlighted). The unfinished
block's text is `open_text()`: a terminal shows it plain while it grows (see
`loom.cli.stream_echo`)."""

from __future__ import annotations

from collections.abc import Callable

FENCES = ("```", "~~~")


class MarkdownStream:
    def __init__(self, emit: Callable[[str], None]) -> None:
        self.emit = emit  # called with each finished block's Markdown source
        self._partial = ""  # the unfinished last line
        self._block: list[str] = []
        self._fence: str | None = None  # the open fence's marker

    def feed(self, text: str) -> None:
        self._partial += text
        *lines, self._partial = self._partial.split("\n")
        for line in lines:
            self._line(line)

    def open_text(self) -> str:
        """The unfinished block as received so far ("" when none is open)."""
        lines = [*self._block, self._partial]
        return "\n".join(lines) if any(line.strip() for line in lines) else ""

    def _line(self, line: str) -> None:
        stripped = line.lstrip()
        if self._fence is not None:
            self._block.append(line)
            if stripped.startswith(self._fence) and not stripped[len(self._fence) :].strip():
                self._fence = None
                self._flush()
            return
        marker = next((f for f in FENCES if stripped.startswith(f)), None)
        if marker is not None:
            self._flush()  # the text before a code block is a block of its own
            self._fence = marker
            self._block.append(line)
        elif not stripped:
            self._flush()
        else:
            self._block.append(line)

    def _flush(self) -> None:
        if any(line.strip() for line in self._block):
            self.emit("\n".join(self._block))
        self._block = []

    def close(self) -> None:
        """The message is complete: render whatever is left."""
        if self._partial:
            self._block.append(self._partial)
            self._partial = ""
        self._fence = None
        self._flush()
