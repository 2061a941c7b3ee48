"""The agent's todo list: a short plan it keeps with `todo_write`, shown by every face.

Claude Code's shape, so prompts and habits carry over: the whole list on every call,
`[{"content": "...", "status": "pending" | "in_progress" | "completed"}]`. The thread
keeps the latest list (`Thread.todos`); architect plans are shown as the same list.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, ConfigDict

from loom.core.jsonish import is_json_list, is_json_object

TodoStatus = Literal["pending", "in_progress", "completed"]
STATUSES: tuple[TodoStatus, ...] = ("pending", "in_progress", "completed")
MAX_TODOS = 50
MAX_CONTENT_CHARS = 500
_MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}


class TodoItem(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    content: str
    status: TodoStatus = "pending"


class TodoError(ValueError):
    """The list the model sent is not usable; the message says how to send it right."""


def parse_todos(raw: object) -> list[TodoItem]:
    """The model's `todos` argument as items. A JSON string holding the list (some models
    send one) is accepted; extra keys of an item (`id`, `activeForm`) are ignored."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raise TodoError("todos must be a list of {content, status} objects") from None
    if not is_json_list(raw):
        raise TodoError(f"todos must be a list, got {type(raw).__name__}")
    if len(raw) > MAX_TODOS:
        raise TodoError(f"keep the list short: at most {MAX_TODOS} items (got {len(raw)})")
    items: list[TodoItem] = []
    for number, entry in enumerate(raw, 1):
        if not is_json_object(entry):
            raise TodoError(f"item {number} must be an object with content and status")
        content = entry.get("content")
        if not isinstance(content, str) or not content.strip():
            raise TodoError(f"item {number} needs a non-empty `content` string")
        status = entry.get("status", "pending")
        if status not in STATUSES:
            raise TodoError(
                f"item {number} has status {status!r}; use one of {', '.join(STATUSES)}"
            )
        text = " ".join(content.split())[:MAX_CONTENT_CHARS]
        items.append(TodoItem(content=text, status=status))
    return items


def checklist(items: list[TodoItem]) -> str:
    """The list as plain-text lines: `[x] done`, `[~] doing`, `[ ] to do`."""
    return "\n".join(f"{_MARKS[item.status]} {item.content}" for item in items)


def progress(items: list[TodoItem]) -> str:
    """`2/5 done`."""
    done = sum(item.status == "completed" for item in items)
    return f"{done}/{len(items)} done"
