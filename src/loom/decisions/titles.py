"""Titles and labels on one short line: a node's title is meant to be one short line, but
nothing stops a model (or an edited thread file) from logging 50,000 characters."""

from __future__ import annotations

LIST_WIDTH = 80
"""Characters of a title in lists (`loom decisions`, pulse, narrative, links)."""
SHOW_WIDTH = 300
"""Characters of a title at the top of `loom decisions show` (its --json has it whole)."""


def one_line(text: str, limit: int = LIST_WIDTH) -> str:
    """`text` with its whitespace runs (newlines too) as single spaces, cut to `limit`
    characters with a "…". Looks at a bounded prefix only, whatever the text's size."""
    head = text[: limit * 8 + 64]
    flat = " ".join(head.split())
    if len(flat) > limit:
        return flat[: limit - 1].rstrip() + "…"
    if len(head) < len(text):  # thousands of blanks, then more: say there is more
        return flat[: limit - 1] + "…"
    return flat


def cut_note(text: str, shown: str) -> str:
    """Why a title was `shown` cut ("" when it was not): for `loom decisions show`."""
    if len(text) <= len(shown) or not shown.endswith("…"):
        return ""
    return f"(title cut: {len(text):,} characters; `--json` shows it whole)"
