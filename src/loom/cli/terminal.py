"""The terminal's side of `loom.core.text.visible_block`: a rich Console that shows text
only as text, and plain writers that do the same.

`SafeConsole` is what every command and the REPL print through. Whatever a renderable
holds (a Markdown answer, a Panel's title, a tool's output), each segment of text it
renders passes `visible_block` on its way out, so an escape sequence in it is shown
(`\\x1b[2J`), never acted on; and rich's own hyperlinks (a Markdown link, `[link=...]`
markup in a string) are dropped, so no text turns into an OSC 8 link that shows one
address and opens another. Rich's styles (colours, bold) are its own control codes and
pass as they are.
"""

from __future__ import annotations

from typing import Any, TextIO, cast

from rich.console import Console
from rich.segment import Segment

from loom.core.text import visible, visible_block

__all__ = ["SafeConsole", "raw_stream", "safe_markdown", "safe_stream", "visible",
           "visible_block"]  # fmt: skip


class SafeConsole(Console):
    def render(self, renderable: Any, options: Any = None) -> Any:
        for segment in super().render(renderable, options):
            text, style, control = segment
            if control:  # rich's own cursor and screen codes, never text
                yield segment
                continue
            if style is not None and style.link:
                style = style.update_link(None)
            if not text.isprintable():
                text = visible_block(text)
            yield Segment(text, style)


def safe_stream(stream: TextIO) -> TextIO:
    """`stream` writing what it is given through `visible_block` (lines for a person,
    such as `loom run`'s messages on stderr); the same stream when it is one already."""
    return stream if isinstance(stream, _SafeWriter) else cast(TextIO, _SafeWriter(stream))


def raw_stream(stream: TextIO) -> TextIO:
    """The stream under `safe_stream(stream)` (for a SafeConsole's own colours)."""
    return stream.stream if isinstance(stream, _SafeWriter) else stream


class _SafeWriter:
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(visible_block(text))

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    def __getattr__(self, name: str) -> Any:  # encoding, closed, ...: the stream's
        return getattr(self.stream, name)


def safe_markdown(source: str) -> Any:
    """Rich Markdown of text from a model or a thread: a link shows its address beside
    its words (`words (https://...)`), never hidden behind them."""
    from rich.markdown import Markdown

    # escapes written out before rich lays the text out, so its lines wrap where they end
    return Markdown(visible_block(source), hyperlinks=False)
