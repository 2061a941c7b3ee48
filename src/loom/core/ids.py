"""Thread ids: `T-` followed by a UUIDv7, so ids sort by creation time."""

from __future__ import annotations

import re

THREAD_ID_PREFIX = "T-"
_THREAD_ID_RE = re.compile(
    r"^T-[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"
)


def new_thread_id() -> str:
    """A fresh `T-<uuidv7>` id."""
    import uuid_utils  # imported here: start-up paths never need it

    return f"{THREAD_ID_PREFIX}{uuid_utils.uuid7()}"


def is_thread_id(value: str) -> bool:
    """True when `value` is a well-formed `T-<uuidv7>` (lower-case hex)."""
    return bool(_THREAD_ID_RE.match(value))


def new_call_id() -> str:
    """An id for a tool call that the provider did not name."""
    import uuid_utils

    return f"call_{uuid_utils.uuid7().hex[:24]}"


def new_message_id() -> str:
    """A message id (`msg_` + UUIDv7 hex): unique, sorts by creation time."""
    import uuid_utils

    return f"msg_{uuid_utils.uuid7().hex}"
