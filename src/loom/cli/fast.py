"""Fast paths for the commands people run most (`loom list`, `loom search`).

They answer from the SQLite index with the standard library only, skipping Typer,
pydantic and the SDKs. Return None to fall through to the full Typer app.
"""

from __future__ import annotations


def try_fast_path(args: list[str]) -> int | None:
    return None
