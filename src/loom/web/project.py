"""The side panel's views of the project: the file tree and a highlighted preview, the
changes since the session's starting commit (git), and the shell commands it ran."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markupsafe import Markup

from loom.core.errors import BadInput
from loom.web.render import diff_html, highlight

MAX_PREVIEW_BYTES = 512_000
MAX_TREE_FILES = 5_000  # a bigger tree is cut (the page says so): the HTML would be huge
MAX_UNTRACKED_DIFFS = 200
MAX_DIFF_CHARS = 400_000


class ProjectPathError(BadInput):
    """A path outside the project, or not a readable file."""


@dataclass
class TreeEntry:
    name: str
    path: str
    children: list[TreeEntry] | None = None  # None: a file
    open: bool = False


def file_tree(files: list[str]) -> list[TreeEntry]:
    """Nested entries from sorted relative paths; folders first, then files."""
    root: dict[str, Any] = {}
    for rel in files:
        node = root
        parts = rel.split("/")
        for part in parts[:-1]:
            node = node.setdefault(part + "/", {})
        node[parts[-1]] = None

    def build(node: dict[str, Any], prefix: str, depth: int) -> list[TreeEntry]:
        dirs = sorted(k for k, v in node.items() if v is not None)
        names = sorted(k for k, v in node.items() if v is None)
        entries = [
            TreeEntry(
                d[:-1],
                prefix + d[:-1],
                build(node[d], prefix + d, depth + 1),
                open=depth == 0 and len(dirs) <= 3,
            )
            for d in dirs
        ]
        entries += [TreeEntry(n, prefix + n) for n in names]
        return entries

    return build(root, "", 0)


def preview(project_root: Path, rel: str) -> Markup:
    """The file highlighted, cut at MAX_PREVIEW_BYTES (read no further: a 1 GiB file costs
    that much, a FIFO is refused at once)."""
    from loom.session import PeekError, peek

    try:
        data, more = peek(project_root, rel, MAX_PREVIEW_BYTES)
    except PeekError as exc:
        raise ProjectPathError(str(exc)) from None
    if b"\0" in data[:8192]:
        return Markup('<p class="muted">A binary file; no preview.</p>')
    text = data.decode("utf-8", errors="replace")
    html = highlight(text, filename=Path(rel).name)
    if more:
        html += f'<p class="muted small">Cut at the first {MAX_PREVIEW_BYTES // 1000} kB.</p>'
    return Markup(html)


@dataclass
class FileChange:
    path: str
    added: int
    removed: int
    html: Markup


def changes(project_root: Path, thread: Any) -> tuple[list[FileChange], str | None]:
    """Per-file diffs of the files the thread's session changed (new ones included)
    against the commit it started from. Returns (changes, problem) where problem says why
    there are none to show."""
    from loom.session import changes_since_start

    found = changes_since_start(project_root, thread, max_untracked=MAX_UNTRACKED_DIFFS)
    if found.problem is not None:
        return [], f"{found.problem[:1].upper()}{found.problem[1:]}."
    result = [
        FileChange(f.path, f.added, f.removed, diff_html(f.text[:MAX_DIFF_CHARS]))
        for f in found.files
    ]
    return result, None


@dataclass
class ShellEntry:
    command: str
    output: str
    status: str


def shell_history(messages: list[Any]) -> list[ShellEntry]:
    """The shell tool's commands and outputs, in order, from the thread."""
    entries: dict[str, ShellEntry] = {}
    for message in messages:
        for call in getattr(message, "tool_calls", ()) or ():
            if call.tool_name == "shell":
                command = str((call.arguments_json or {}).get("command", ""))
                entries[call.id] = ShellEntry(command, "", "running")
        if getattr(message, "role", "") == "tool" and message.tool_call_id in entries:
            entry = entries[message.tool_call_id]
            entry.output = message.content[-20_000:]
            entry.status = "error" if message.is_error else "done"
    return list(entries.values())
