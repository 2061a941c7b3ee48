"""Side branches: rewound-away turns that the thread keeps but the model no longer sees.

Rewinding the conversation never deletes a message (history is append-only). The
thread's `side_branches` field lists half-open index ranges `[start, end)` of its
messages that a rewind set aside, with when and why; everything else is the live
conversation. Pure functions over the thread's plain data.
"""

from __future__ import annotations

from typing import Any

from loom.core.clock import now_iso
from loom.core.extras import extra_field
from loom.core.jsonish import is_json_list, is_json_object

FIELD = "side_branches"


def side_branches(thread: object) -> list[object]:
    """The records as the thread holds them (read from a file: each one may be damaged)."""
    branches: object = extra_field(thread, FIELD)
    return branches if is_json_list(branches) else []


def hidden_indexes(thread: object) -> set[int]:
    hidden: set[int] = set()
    for branch in side_branches(thread):
        if not is_json_object(branch):
            continue  # a damaged record hides nothing
        try:
            hidden.update(range(_index(branch["start"]), _index(branch["end"])))
        except (KeyError, TypeError, ValueError):
            continue  # nor does one with damaged bounds
    return hidden


def _index(value: object) -> int:
    """`int(value)` for what a JSON record can hold; TypeError for the rest."""
    if not isinstance(value, int | float | str):
        raise TypeError(value)
    return int(value)


def visible_messages(thread: Any) -> list[Any]:
    """The conversation the model sees: every message not set aside by a rewind."""
    hidden = hidden_indexes(thread)
    if not hidden:
        return list(thread.messages)
    return [m for i, m in enumerate(thread.messages) if i not in hidden]


def set_aside(thread: Any, start: int, reason: str = "rewind") -> dict[str, Any] | None:
    """Mark messages `start..end` as a side branch; None when there is nothing to hide."""
    end = len(thread.messages)
    if not 0 <= start < end:
        return None
    first = thread.messages[start]
    branch = {
        "start": start,
        "end": end,
        "first_message_id": getattr(first, "id", None),
        "reason": reason,
        "created_at": now_iso(),
    }
    setattr(thread, FIELD, [*side_branches(thread), branch])
    return branch
