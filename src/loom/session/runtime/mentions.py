"""@-mentions: `@path` or `@path:10-40` in a message attaches that file (or a folder's
listing) to the message, and puts the file in the repo map's focus.

    expand_mentions("fix @src/app.py:10-40 please", root)
    -> Expanded(text="fix @src/app.py:10-40 please", files=["src/app.py"],
                attachments=[Attachment("file", "src/app.py:10-40", '<file path=...>...</file>')])

The contents are attachments of the message, not its text: the model reads them after
the words (`loom.core.messages.for_model`), the title and search only the words.

A word counts as a mention when it starts with `@` after a space (or at the start) and
names a path: it exists, or has a file extension or a `:line` range, or starts in one
of the project's folders (or with `/`, `~`, `..`). So `@property`, `@here` or
`@types/node` in prose stay text, while `@src/missing.py` is an error. Paths
are relative to the project root; one outside it (`..`, an absolute path elsewhere, a
symlink out) or missing is a `MentionError` before anything is sent.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from loom.core.errors import BadInput
from loom.core.images import (
    IMAGE_SUFFIXES,
    MAX_IMAGE_BYTES,
    ImageError,
    ImageRef,
    check_count,
    image_ref,
)
from loom.core.messages import Attachment

MAX_FILE_BYTES = 256_000
MAX_RANGE_SCAN_BYTES = 16_000_000  # a range is looked for in this much of a file
MAX_LISTING = 300
_MENTION = re.compile(r"(?:(?<=\s)|^)@([^\s@]+)")
_RANGE = re.compile(r"^(.*?):(\d+)(?:-(\d+))?$")
_TRAILING = ".,;!?)]}'\""


class MentionError(BadInput):
    """A mentioned path cannot be attached; the message says which and why."""


@dataclass
class Expanded:
    text: str
    files: list[str] = field(default_factory=list)  # project-relative, in mention order
    images: list[ImageRef] = field(default_factory=list)  # @shot.png, pasted image paths
    attachments: list[Attachment] = field(default_factory=list)  # files' contents, listings


@dataclass(frozen=True)
class Mention:
    raw: str  # as typed, without the @
    path: str
    start: int | None = None
    end: int | None = None


def find_mentions(text: str, root: Path) -> list[Mention]:
    found: list[Mention] = []
    for match in _MENTION.finditer(text):
        raw = match.group(1).rstrip(_TRAILING)
        if not raw:
            continue
        path, start, end = raw, None, None
        ranged = _RANGE.match(raw)
        if ranged:
            path = ranged.group(1)
            start = int(ranged.group(2))
            end = int(ranged.group(3)) if ranged.group(3) else start
        if not _looks_like_path(path, ranged is not None, root):
            continue
        found.append(Mention(raw, path, start, end))
    return found


def _looks_like_path(path: str, has_range: bool, root: Path) -> bool:
    if has_range or re.search(r"\.\w+$", path) or os.path.lexists(root / path):
        return True
    # a/b names a path when its first folder is the project's (`@types/node` is prose)
    first = path.split("/", 1)[0]
    return "/" in path and (path.startswith(("/", "~", "..")) or os.path.isdir(root / first))


def may_name_files(text: str) -> bool:
    """Whether `text` could hold a mention or a pasted image path: both need `@`, `/` or
    `~`. Most messages have none, and need no scan on a worker thread."""
    return "@" in text or "/" in text or "~" in text


def expand_mentions(text: str, root: Path) -> Expanded:
    """The message with each mentioned file's content (or folder listing) attached."""
    root = root.resolve()
    mentions = find_mentions(text, root)
    images = pasted_images(text)
    if not mentions and not images:
        return Expanded(text)
    blocks: list[Attachment] = []
    files: list[str] = []
    for mention in mentions:
        target, rel = _resolve(mention.path, root)
        if rel in files and mention.start is None:
            continue
        if target.is_dir():
            blocks.append(Attachment(kind="listing", label=f"{rel}/", text=_listing(target, rel)))
        elif target.suffix.lower() in IMAGE_SUFFIXES and mention.start is None:
            images.append(_project_image(root, rel, f"@{mention.raw}"))
        else:
            content = _file_block(rel, mention, root)
            blocks.append(Attachment(kind="file", label=_label(rel, mention), text=content))
        files.append(rel)
    check_count(len(images))
    return Expanded(text, list(dict.fromkeys(files)), images, blocks)


def _label(rel: str, mention: Mention) -> str:
    """`calc.py`, `calc.py:3` or `calc.py:1-10`: the file and the lines asked for."""
    if mention.start is None:
        return rel
    return f"{rel}:{mention.start}" + (f"-{mention.end}" if mention.end is not None else "")


_PASTED = re.compile(r"""'([^']+)'|"([^"]+)"|((?:\\ |\S)+)""")


def pasted_images(text: str) -> list[ImageRef]:
    """Image files named by an absolute (or ~) path in the message, as a terminal pastes
    a dropped screenshot (quoted, or with `\\ ` for spaces, or as a file:// URL). The
    person typed them, so they may lie outside the project; only existing image files
    count, and a word that is not a path stays text."""
    found: list[ImageRef] = []
    for match in _PASTED.finditer(text):
        word = next(group for group in match.groups() if group is not None)
        word = word.replace("\\ ", " ").removeprefix("file://").rstrip(_TRAILING)
        if not word.lower().endswith(IMAGE_SUFFIXES) or not word.startswith(("/", "~")):
            continue
        path = Path(os.path.expanduser(word))
        if path.is_file():
            found.append(_image(path, path.name, word))
    return found


def _project_image(root: Path, rel: str, said: str) -> ImageRef:
    """A mentioned image in the project, read as the file tools read (a FIFO, device or
    socket named `shot.png` is refused at once, never opened for a blocking read)."""
    from loom.session.runtime.file_peek import PeekError, peek

    try:
        data, more = peek(root, rel, MAX_IMAGE_BYTES)
    except PeekError as exc:
        raise MentionError(f"{said}: {exc}") from None
    return _image_of(rel, data + (b"\0" if more else b""), said)  # past the limit: says so


def _image(target: Path, name: str, said: str) -> ImageRef:
    """A pasted image path (anywhere: the person typed it), opened without blocking and
    read only when it is a regular file."""
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise MentionError(f"{said}: cannot read {name} ({exc.strerror or exc})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise MentionError(f"{said}: {name} is not a regular file; not read")
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read(MAX_IMAGE_BYTES + 1)  # past the limit: image_ref says so
    except OSError as exc:
        raise MentionError(f"{said}: cannot read {name} ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    return _image_of(name, data, said)


def _image_of(name: str, data: bytes, said: str) -> ImageRef:
    try:
        return image_ref(name, data)
    except ImageError as exc:
        raise MentionError(f"{said}: {exc}") from None


def _resolve(path: str, root: Path) -> tuple[Path, str]:
    candidate = Path(os.path.expanduser(path))
    if not candidate.is_absolute():
        candidate = root / candidate
    try:
        resolved = candidate.resolve(strict=True)
    except FileNotFoundError:
        raise MentionError(
            f"@{path}: no such file or folder in the project ({root}); check the path "
            "(Tab completes it in the REPL)"
        ) from None
    except OSError as exc:
        raise MentionError(f"@{path}: cannot read it ({exc.strerror or exc})") from None
    if resolved != root and root not in resolved.parents:
        raise MentionError(
            f"@{path} is outside the project ({root}); only files inside it can be attached"
        )
    rel = resolved.relative_to(root).as_posix() if resolved != root else "."
    return resolved, rel


def _file_block(rel: str, mention: Mention, root: Path) -> str:
    from loom.session.runtime.file_peek import PeekError, peek

    whole = mention.start is None
    try:
        # read no further than needed: a FIFO is refused, a 1 GiB log is not read whole
        data, more = peek(root, rel, MAX_FILE_BYTES if whole else MAX_RANGE_SCAN_BYTES)
    except PeekError as exc:
        raise MentionError(f"@{mention.raw}: {exc}") from None
    if more and whole:
        raise MentionError(
            f"@{mention.raw}: {rel} is over {MAX_FILE_BYTES:,} bytes, too large to attach "
            f"whole; attach a range such as @{rel}:1-200"
        )
    if b"\0" in data[:8192]:
        raise MentionError(f"@{mention.raw}: {rel} is a binary file; only text can be attached")
    lines = data.decode("utf-8", errors="replace").splitlines()
    if more:
        lines.pop()  # cut mid-line
    if whole:
        return f'<file path="{rel}">\n' + "\n".join(lines) + "\n</file>"
    start, end = mention.start or 1, mention.end or mention.start or 1
    if start < 1 or end < start or start > len(lines):
        within = f" in its first {MAX_RANGE_SCAN_BYTES // 1_000_000} MB" if more else ""
        raise MentionError(
            f"@{mention.raw}: {rel} has {len(lines)} lines{within}; give a range like "
            f"@{rel}:1-{max(1, len(lines))} (first-last, 1-based)"
        )
    end = min(end, len(lines))
    body = "\n".join(lines[start - 1 : end])
    return f'<file path="{rel}" lines="{start}-{end}">\n{body}\n</file>'


def _listing(target: Path, rel: str) -> str:
    try:
        entries = sorted(os.scandir(target), key=lambda e: e.name)
    except OSError as exc:
        raise MentionError(f"@{rel}: cannot list the folder ({exc.strerror or exc})") from None
    names = [
        e.name + ("/" if e.is_dir(follow_symlinks=False) else "")
        for e in entries
        if e.name not in (".git", "__pycache__")
    ]
    shown = names[:MAX_LISTING]
    more = f"\n[... {len(names) - MAX_LISTING} more entries]" if len(names) > MAX_LISTING else ""
    return f'<directory path="{rel}">\n' + "\n".join(shown) + more + "\n</directory>"


def project_files(root: Path, limit: int = 50_000) -> list[str]:
    """The project's files as the repo index sees them (for Tab completion)."""
    from loom.repointel.scan import scan_project

    return sorted(scan_project(str(root.resolve())).files)[:limit]
