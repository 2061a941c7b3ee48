"""Checks on raw request bodies that model validation cannot make.

The thread models repair a lone surrogate (`"\\ud83d"` in JSON, half an emoji) as
text enters Loom, so by the time a route sees the Thread it is clean. The server must
not store a silently changed copy of what a client sent (the client would believe the
server holds its text), so it refuses such a body instead: 422, never a 500.
"""

from __future__ import annotations

import json
import re

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def lone_surrogate_in(body: bytes) -> bool:
    """Whether the JSON text holds a surrogate escape that is not half of a valid pair."""
    if not _SURROGATE_ESCAPE.search(body):
        return False  # the common case: one regex scan, no second parse
    try:
        json.dumps(json.loads(body), ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    except (ValueError, RecursionError):
        return False  # not JSON: validation already said so
    return False
