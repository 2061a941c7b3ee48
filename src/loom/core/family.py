"""A thread's family: the sub-agents its `task` calls started, and the footer that names
each child's thread in the call's result (written by the task tool, read back here)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

FOOTER = "[sub-agent {agent}, thread {thread_id}]"
_FOOTER_RE = re.compile(r"\[sub-agent (?P<agent>[\w-]+), thread (?P<thread>T-[0-9a-f-]+)\]\s*$")


@dataclass(frozen=True)
class Child:
    call_id: str
    agent: str
    thread_id: str


def footer(agent: str, thread_id: str) -> str:
    return FOOTER.format(agent=agent, thread_id=thread_id)


def child_named(result: str) -> tuple[str, str] | None:
    """(agent, thread id) of the child a task result names, or None."""
    match = _FOOTER_RE.search(result or "")
    return (match["agent"], match["thread"]) if match else None


def children_of(messages: Iterable[Any]) -> list[Child]:
    """The children named by the `task` results among `messages`, in order."""
    found: list[Child] = []
    for message in messages:
        if getattr(message, "role", "") != "tool" or getattr(message, "tool_name", "") != "task":
            continue
        match = _FOOTER_RE.search(getattr(message, "content", "") or "")
        if match:
            found.append(Child(message.tool_call_id, match["agent"], match["thread"]))
    return found
