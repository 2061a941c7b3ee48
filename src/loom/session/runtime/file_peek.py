"""Bounded reads of project files for what a face shows (a preview, an edit's diff).

The path comes from the model or a web page, so it may name a FIFO (reading it would
block the caller for good), a 1 GiB or sparse file, a symlink out of the project, or hold
a NUL. Here a read never blocks, never reads past its limit, and never leaves the project.
"""

from __future__ import annotations

import os
from pathlib import Path

from loom.core.errors import BadInput


class PeekError(BadInput):
    """The path is not a readable regular file inside the project (the message says why)."""


def project_relative(root: Path | str, path: str) -> str | None:
    """`path` (relative, or absolute inside the project) relative to `root`; None when it
    leads outside or holds a NUL."""
    if "\0" in path:
        return None
    base = os.path.abspath(root)
    full = os.path.normpath(os.path.join(base, path))
    if full != base and not full.startswith(base.rstrip(os.sep) + os.sep):
        return None
    return os.path.relpath(full, base)


def peek(root: Path | str, path: str, max_bytes: int) -> tuple[bytes, bool]:
    """At most `max_bytes` of the project file `path`, and whether it holds more."""
    from loom._beneath import Escape, NotAFile, read_head

    rel = project_relative(root, path)
    if rel is None:
        raise PeekError(f"{path!r} is not a path inside the project")
    try:
        return read_head(str(root), rel, max_bytes)
    except FileNotFoundError:
        raise PeekError(f"{rel}: no such file in the project") from None
    except (NotAFile, IsADirectoryError):
        raise PeekError(f"{rel} is not a regular file (a folder, FIFO or device)") from None
    except Escape:
        raise PeekError(f"{rel} leads outside the project (a symlink)") from None
    except OSError as exc:
        raise PeekError(f"{rel}: cannot read it ({exc.strerror or exc})") from None


def peek_text(root: Path | str, path: str, max_bytes: int) -> str | None:
    """The file's text; None when it cannot be read (see `peek`), is over `max_bytes`
    or is not UTF-8."""
    try:
        data, more = peek(root, path, max_bytes)
        return None if more else data.decode("utf-8")
    except (PeekError, UnicodeDecodeError):
        return None
