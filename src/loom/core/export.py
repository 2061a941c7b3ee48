"""A thread as readable text: the git line and the Markdown export (`loom export`)."""

from __future__ import annotations

import json
import re

from loom.core.messages import AssistantMessage, ToolMessage, UserMessage
from loom.core.thread import Thread


def git_line(thread: Thread) -> str | None:
    """`main @ a1b2c3d (dirty)`, or None when the thread has no git state."""
    if not (thread.git_branch or thread.git_current_commit_sha):
        return None
    branch = thread.git_branch or "(detached)"
    sha = f" @ {thread.git_current_commit_sha[:7]}" if thread.git_current_commit_sha else ""
    dirty = " (dirty)" if thread.git_end_dirty else ""
    return f"{branch}{sha}{dirty}"


def model_name(thread: Thread) -> str | None:
    """`provider:model` as the person passes it to `--model` (the model alone when the
    thread does not say which provider, or the model already names it)."""
    if not thread.model:
        return None
    if not thread.provider or thread.model.startswith(f"{thread.provider}:"):
        return thread.model
    return f"{thread.provider}:{thread.model}"


def thread_to_markdown(thread: Thread) -> str:
    out = [f"# {thread.title}", ""]
    facts = [
        ("Thread", thread.id),
        ("Created", thread.created_at),
        ("Last activity", thread.last_activity_at),
        ("Workspace", thread.workspace_root),
        ("Git", git_line(thread)),
        ("Remote", thread.git_remote_url),
        ("Model", model_name(thread)),
        ("Tags", ", ".join(thread.metadata.tags) or None),
    ]
    out += [f"- **{name}:** {value}" for name, value in facts if value]
    out.append("")
    for message in thread.messages:
        if isinstance(message, UserMessage):
            out += ["## You", "", message.content, ""]
            for attached in message.attachments or ():  # a file, a hook's context: not typed
                out += [f"Attached: {attached.label}", "", *_fenced(attached.text)]
        elif isinstance(message, AssistantMessage):
            out += ["## Loom", ""]
            if message.content:
                out += [message.content, ""]
            for call in message.tool_calls:
                args = json.dumps(call.arguments_json, indent=2, ensure_ascii=False)
                out += [f"Tool call `{call.tool_name}` ({call.id}):", "", *_fenced(args, "json")]
        elif isinstance(message, ToolMessage):
            error = " (error)" if message.is_error else ""
            out += [f"### Result of `{message.tool_name}`{error}", "", *_fenced(message.content)]
        else:
            out += [f"## {message.role.capitalize()}", "", message.content, ""]
    return "\n".join(out).rstrip() + "\n"


def _fenced(text: str, lang: str = "") -> list[str]:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{lang}", text, fence, ""]
