"""Bounded reads of project files for what a face shows (a preview, an edit's diff).

The path comes from the model or a web page, so it may name a FIFO (reading it would
block the caller for good), a 1 GiB or sparse file, a symlink out of the project, or hold
a NUL. Read through `loom.project_files`: never blocking, never past the limit, never
outside the project; here every refusal is one `PeekError` that says why.
"""

from __future__ import annotations

from pathlib import Path

from loom.core.errors import BadInput


class PeekError(BadInput):
    """The path is not a readable regular file inside the project (the message says why)."""


def peek(root: Path | str, path: str, max_bytes: int) -> tuple[bytes, bool]:
    """At most `max_bytes` of the project file `path`, and whether it holds more."""
    from loom.project_files import OutsideProject, read_project_bytes

    if "\0" in path:
        raise PeekError("a path cannot hold a NUL character")
    try:
        data = read_project_bytes(root, path, max_bytes=max_bytes + 1)
    except OutsideProject as exc:
        raise PeekError(str(exc)) from None
    except (OSError, ValueError) as exc:
        why = getattr(exc, "strerror", None) or exc
        raise PeekError(f"{path}: cannot read it ({why})") from None
    if data is None:
        raise PeekError(f"{path}: no such file in the project")
    return data[:max_bytes], len(data) > max_bytes


def peek_text(root: Path | str, path: str, max_bytes: int) -> str | None:
    """The file's text; None when it cannot be read (see `peek`), is over `max_bytes`
    or is not UTF-8."""
    try:
        data, more = peek(root, path, max_bytes)
        return None if more else data.decode("utf-8")
    except (PeekError, UnicodeDecodeError):
        return None
