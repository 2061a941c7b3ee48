"""How the REPL shows a model's reasoning: dimmed, folded to one line once it ends, or
(after `/thinking`) streamed whole as it arrives. Only readable reasoning reaches here
(thinking, summaries); opaque parts are never events."""

from __future__ import annotations

from loom.cli.stream_echo import plain

FOLD_CHARS = 100  # of the first line shown when folded


class ThinkingView:
    def __init__(self) -> None:
        self.unfolded = False  # `/thinking`: stream it whole
        self.last = ""  # the newest whole reasoning, for `/thinking` to show
        self._parts: list[str] = []
        self.open = False  # reasoning is arriving

    def feed(self, text: str) -> str:
        """Take a piece; what to write now (terminal-safe; "" while folded)."""
        if not self.open:
            self.open, self._parts = True, []
        self._parts.append(text)
        return plain(text) if self.unfolded else ""

    def close(self) -> str:
        """The reasoning ended: the folded line to print ("" when unfolded or none)."""
        if not self.open:
            return ""
        self.open = False
        self.last = "".join(self._parts)
        self._parts = []
        return "" if self.unfolded else folded_line(self.last)


def folded_line(text: str) -> str:
    """`✻ first line…  (N words; Ctrl-O or /thinking shows it)`, terminal-safe."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    head = plain(lines[0])
    cut = len(head) > FOLD_CHARS or len(lines) > 1
    head = head[:FOLD_CHARS].rstrip() + ("…" if cut else "")
    return f"✻ {head}  ({len(text.split())} words of thinking; Ctrl-O or /thinking shows it)"
