"""How a tool call is shown to a person: one small record every face renders from.

A tool describes its calls by implementing `present(args) -> ToolPresentation` (the
built-ins do it through `BuiltinTool.kind` and `BuiltinTool.present`). The REPL's tool
lines, the web page's cards, ACP's `tool_call` updates and the approval prompt all read
this record, so a new tool (a plugin's too) is shown right without a face knowing it:

    shown = present(session.tools.get(name), name, args)
    shown.title       # "Edit calc.py"
    shown.kind        # "edit" (ACP's tool kinds)
    shown.subject     # "calc.py": the one argument a person wants to see
    shown.path        # the file the call reads or changes, project-relative, or None
    shown.edits_files # the call changes `path`: faces show its diff
    shown.preview     # the change, from the arguments alone (EditPreview), or None

A tool without `present` (or one whose `present` fails) is shown from its arguments.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]
TOOL_KINDS: tuple[ToolKind, ...] = (
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other",
)  # fmt: skip
# the arguments that name what a call is about, most telling first
SUBJECT_KEYS = ("path", "command", "pattern", "file_path", "query", "subcommand", "url", "file")
TITLE_CHARS = 80


@dataclass(frozen=True)
class EditPreview:
    """The change an editing call asks for, from its arguments alone: `new_text`
    replaces `old_text` in the file at `path` (every occurrence with `replace_all`), or,
    when `old_text` is None, becomes the whole file."""

    path: str
    new_text: str
    old_text: str | None = None
    replace_all: bool = False

    @property
    def whole_file(self) -> bool:
        return self.old_text is None

    def applied_to(self, before: str | None) -> str | None:
        """The file's text after the call, or None when it cannot be worked out from
        `before` (no match, several matches: the tool itself will explain)."""
        if self.old_text is None:
            return self.new_text
        old, new = self.old_text, self.new_text
        if before is None or not old:
            return None
        if "\r\n" in before and "\r" not in old:  # as the file tools do: the file uses \r\n
            old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        count = before.count(old)
        if count == 0 or (count > 1 and not self.replace_all):
            return None
        return before.replace(old, new) if self.replace_all else before.replace(old, new, 1)


@dataclass(frozen=True)
class ToolPresentation:
    title: str
    kind: ToolKind = "other"
    subject: str = ""
    path: str | None = None
    edits_files: bool = False
    preview: EditPreview | None = None


@runtime_checkable
class PresentsCalls(Protocol):
    """A tool that says how its calls are shown (optional part of the Tool protocol)."""

    def present(self, args: dict[str, Any]) -> ToolPresentation: ...


def present(tool: object | None, tool_name: str, args: dict[str, Any]) -> ToolPresentation:
    """How a call of `tool` is shown (None: a tool nobody has; loom.session's
    `present_call` looks the built-ins up for a thread no session runs). Never raises: a
    tool whose `present` fails is shown from its arguments."""
    args = args if isinstance(args, dict) else {}
    if isinstance(tool, PresentsCalls):
        try:
            shown = tool.present(args)
        except Exception:  # a plugin's bug must not stop a face from showing the call
            shown = None
        if isinstance(shown, ToolPresentation):
            return shown
    return plain_presentation(tool_name, args)


def plain_presentation(
    tool_name: str, args: dict[str, Any], kind: ToolKind = "other", title: str = ""
) -> ToolPresentation:
    """A call shown from its arguments alone: its subject, the file named by `path`."""
    path = args.get("path")
    return ToolPresentation(
        title=title or _default_title(tool_name),
        kind="fetch" if kind == "other" and _is_fetch(tool_name) else kind,
        subject=subject_of(args),
        path=path if isinstance(path, str) and path else None,
    )


def subject_of(args: dict[str, Any]) -> str:
    for key in SUBJECT_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def arguments_line(args: dict[str, Any], limit: int = 160) -> str:
    """The arguments as one line of JSON, cut at `limit` characters."""
    return json.dumps(args, ensure_ascii=False)[:limit] if args else ""


def one_line(text: str, limit: int = TITLE_CHARS) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _default_title(tool_name: str) -> str:
    if tool_name.startswith("mcp__"):
        _, server, name = [*tool_name.split("__", 2), "", ""][:3]
        return f"{name} ({server})"
    return tool_name


def _is_fetch(tool_name: str) -> bool:
    return tool_name == "fetch" or tool_name.endswith("__fetch")
