"""Confine a path the model gave to the project root.

`confine` checks a path; `open_confined`, `open_confined_dir` and `replace_confined` then
open what it resolved to beneath the root without following any symlink (`loom._beneath`),
so a symlink swapped in after the check is a ToolError, never an escape.

Relative paths are taken from the root. Absolute paths must lie inside it. `..` may not
climb out, and neither may a symlink anywhere along the way (the final file, a folder
in between, or a dangling link whose target would be outside): the path is resolved
and the result must still be inside the root.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from loom._beneath import Escape, open_dir, open_file, replace_file
from loom.tools.base import ToolError


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def confine(root: Path, raw: str) -> tuple[Path, str]:
    """(the resolved absolute path, its posix path relative to the root: "." for the root)."""
    if not isinstance(raw, str) or not raw.strip():
        raise ToolError("the path is empty; give a path relative to the project root")
    if "\x00" in raw:
        raise ToolError("the path contains a NUL character")
    root_abs = os.path.abspath(root)
    root_real = os.path.realpath(root)
    text = raw.strip()
    if text.startswith("~"):
        raise ToolError(
            f"{raw!r} points at the home folder, which is outside the project; "
            "give a path relative to the project root"
        )
    candidate = os.path.normpath(text if os.path.isabs(text) else os.path.join(root_real, text))
    for base in (root_real, root_abs):
        if _inside(candidate, base):
            rel = os.path.relpath(candidate, base)
            break
    else:
        raise ToolError(
            f"{raw!r} is outside the project root {root_real}; "
            "only paths inside the project can be used"
        )
    try:
        resolved = os.path.realpath(os.path.join(root_real, rel))
    except OSError:  # a link on the way changed while it was being resolved
        raise _changed(rel) from None
    if not _inside(resolved, root_real):
        raise ToolError(
            f"{raw!r} goes through a symlink that leads outside the project root "
            f"(to {resolved}); only paths inside the project can be used"
        )
    rel_real = os.path.relpath(resolved, root_real)
    return Path(resolved), PurePosixPath(Path(rel_real)).as_posix()


def lexical_path(root: Path, raw: object) -> str | None:
    """`raw` relative to the root as written (symlinks not resolved), or None when it
    is not a path inside the root."""
    if not isinstance(raw, str) or not raw.strip() or "\x00" in raw:
        return None
    text = raw.strip()
    root_abs, root_real = os.path.abspath(root), os.path.realpath(root)
    candidate = os.path.normpath(text if os.path.isabs(text) else os.path.join(root_real, text))
    for base in (root_real, root_abs):
        if _inside(candidate, base):
            return PurePosixPath(Path(os.path.relpath(candidate, base))).as_posix()
    return None


def subject_path(root: Path, raw: object) -> str | None:
    """The normalized relative path for permission grants; the raw text if it escapes."""
    if not isinstance(raw, str):
        return None
    try:
        return confine(root, raw)[1]
    except ToolError:
        return raw


def _changed(rel: str) -> ToolError:
    return ToolError(
        f"{rel} changed while it was being opened (a symlink appeared on the way); "
        "only paths inside the project can be used. Try again."
    )


def open_confined(root: Path, rel: str, flags: int = os.O_RDONLY) -> int:
    """A descriptor of `rel` (the relative path `confine` returned) beneath `root`."""
    try:
        return open_file(str(root), rel, flags)
    except Escape:
        raise _changed(rel) from None


def open_confined_dir(root: Path, rel: str) -> int:
    try:
        return open_dir(str(root), "" if rel == "." else rel)
    except Escape:
        raise _changed(rel) from None


def replace_confined(root: Path, rel: str, data: bytes) -> bool:
    """Atomically replace (or create) `rel` beneath `root`; True when created."""
    try:
        return replace_file(str(root), rel, data)
    except Escape:
        raise _changed(rel) from None
