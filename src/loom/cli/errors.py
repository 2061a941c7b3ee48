"""The one shape of an error line on stderr, `loom: error: ...`, for every command (the
fast paths too: nothing here imports Typer)."""

from __future__ import annotations

ERROR_PREFIX = "loom: error: "


def error_line(message: object) -> str:
    """The one line an error is shown as, wherever it comes from (a file's or a key's
    name in it is shown as text: its escape sequences are written out, never run)."""
    from loom.core.text import visible

    return ERROR_PREFIX + visible(" ".join(str(message).split()))
