"""What a person is asked to approve, in full: the diff of an edit, the content of a new
file, the exact command and where it runs, and in words what "allow always" would cover.

Every face shows the same `ApprovalView` (the REPL prints it; the web page can render it):

    view = approval_view(session, "file_edit", {"path": "calc.py", ...})
    view.title, view.body, view.body_kind, view.cwd, view.grant

`edit_diff(before, after, path)` is also how a face shows the change once it is applied;
`present_call(session.tools, name, args)` is how every face shows a call (its tool says).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom.tools.base import ToolRegistry
from loom.tools.presentation import ToolPresentation, present

if TYPE_CHECKING:
    from loom.session.runtime.session import Session

MAX_PREVIEW_BYTES = 2_000_000  # a bigger file is not read to preview an edit of it


@dataclass(frozen=True)
class ApprovalView:
    title: str  # "Edit calc.py", "Create notes.md", "Run a shell command"
    body: str  # the diff, the new content, the command, or the arguments as JSON
    body_kind: str  # "diff" | "content" | "command" | "arguments" | ""
    cwd: str | None  # where a command runs
    grant: str  # what `allow always` covers, in words
    may_type_prefix: bool  # a command: the person may type the prefix a grant covers


def edit_diff(before: str | None, after: str, path: str) -> str:
    """A unified diff (3 lines of context); `before` None means a new file."""
    old = [] if before is None else before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    lines = difflib.unified_diff(
        old, new, fromfile="/dev/null" if before is None else f"a/{path}", tofile=f"b/{path}"
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def read_text(root: Path, path: str, max_bytes: int = MAX_PREVIEW_BYTES) -> str | None:
    """The file's text, or None when it does not exist, is outside the project, is not a
    regular file, is over `max_bytes` (never read further) or is not text."""
    from loom.session.runtime.file_peek import peek_text

    return peek_text(root, path, max_bytes)


def present_call(
    tools: ToolRegistry | None, tool_name: str, args: dict[str, Any]
) -> ToolPresentation:
    """How a call is shown (title, kind, subject, file, edits, preview), as its tool says;
    `tools` is the session's registry (None: a thread no session runs, whose built-in
    tools' calls are shown as those tools show them)."""
    tool: object | None = tools.get(tool_name) if tools is not None else None
    if tool is None:
        from loom.tools.defaults import builtin_tool_types

        kind = builtin_tool_types().get(tool_name)
        tool = kind() if kind is not None else None
    return present(tool, tool_name, args)


def approval_view(session: Session, tool_name: str, args: dict[str, Any]) -> ApprovalView:
    root = Path(session.project_root)
    shown = present_call(session.tools, tool_name, args)
    grant = grant_words(session, tool_name, args)
    path = shown.path
    if shown.edits_files and path:
        before = read_text(root, path)
        preview = shown.preview
        after = preview.applied_to(before) if preview is not None else None
        if preview is not None and preview.whole_file and before is None and after is not None:
            return ApprovalView(f"Create {path}", after, "content", None, grant, False)
        if after is not None:
            verb = "Overwrite" if preview is not None and preview.whole_file else "Edit"
            return ApprovalView(
                f"{verb} {path}", edit_diff(before, after, path), "diff", None, grant, False
            )
        return ApprovalView(
            f"Edit {path} (the text to replace was not found as given)",
            _arguments(args),
            "arguments",
            None,
            grant,
            False,
        )
    command = args.get("command")
    if tool_name == "shell" and isinstance(command, str):
        return ApprovalView(
            "Run a shell command", command, "command", str(root), grant, _one_command(command)
        )
    if tool_name == "git":
        return ApprovalView(f"Run git ({tool_name})", _arguments(args), "arguments", str(root),
                            grant, False)  # fmt: skip
    return ApprovalView(f"Use {tool_name}", _arguments(args), "arguments", None, grant, False)


def grant_words(
    session: Session, tool_name: str, args: dict[str, Any], scope: str | None = None
) -> str:
    """What `allow_always` (with `scope`, a prefix the person typed) would cover."""
    policy = getattr(session, "permissions", None)
    scope_for = getattr(policy, "scope_for", None)
    tool = session.tools.get(tool_name) if getattr(session, "tools", None) else None
    if scope_for is None or tool is None:
        return f"{tool_name} calls like this one, in this project"
    command = args.get("command")
    if tool_name == "shell" and isinstance(command, str):
        from loom.permissions.dangerous import dangerous_reason

        if dangerous_reason(command):
            return "nothing: a dangerous command asks every time (a = allow this once)"
    kind, value = scope_for(tool, args, scope)
    return describe_scope(tool_name, kind, value, present(tool, tool_name, args).edits_files)


def prefix_refusal(prefix: str) -> str | None:
    """Why a command prefix a person typed cannot be granted (an interpreter's name
    alone), or None."""
    from loom.permissions.shell_rules import prefix_refusal as refusal

    return refusal(prefix)


def describe_scope(tool_name: str, kind: str, value: str, edits_files: bool = False) -> str:
    if kind == "any":
        return f"every {tool_name} call in this project"
    if kind == "prefix":
        return f"every `{value} ...` command in this project"
    if kind == "dir":
        return f"{tool_name} on any file under {value} in this project"
    if tool_name == "shell" or (kind == "exact" and not edits_files):
        return f"exactly `{value}` in this project, nothing else"
    return f"{tool_name} on {value} in this project"


def _one_command(command: str) -> bool:
    """A prefix grant can cover this command: one plain command, nothing chained."""
    from loom.permissions.shell_rules import literal_commands

    try:
        found = literal_commands(command)
    except Exception:  # a parser problem: offer no prefix
        return False
    return found is not None and len(found) == 1


def _arguments(args: dict[str, Any]) -> str:
    import json

    return json.dumps(args, ensure_ascii=False, indent=2)
