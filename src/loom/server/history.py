"""Append-only history, checked by the server.

Each stored thread keeps `message_count` and `history_hash`: a hash chain over its
messages (h_i = sha256(h_{i-1} + canonical(message_i))). A new copy is accepted only
if its first `message_count` messages hash to the stored value, so no write can drop
or rewrite a message another machine already synced; the writer gets a 409 and merges.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from loom.core.merge import message_key

EMPTY_HISTORY = hashlib.sha256(b"").hexdigest()


def history_hashes(messages: Sequence[Any], at: int | None = None) -> tuple[str, str | None]:
    """(hash of all messages, hash of the first `at` messages or None if there are fewer)."""
    current = EMPTY_HISTORY
    at_value = current if at == 0 else None
    for index, message in enumerate(messages, start=1):
        digest = hashlib.sha256(current.encode())
        digest.update(message_key(message).encode())
        current = digest.hexdigest()
        if index == at:
            at_value = current
    return current, at_value


def extends(messages: Sequence[Any], stored_count: int, stored_hash: str) -> bool:
    """True when `messages` starts with the stored history."""
    if len(messages) < stored_count:
        return False
    _, prefix = history_hashes(messages, stored_count)
    return prefix == stored_hash


def prefix_hashes(messages: Sequence[Any]) -> list[str]:
    """The hash of every prefix: element i is the hash of the first i messages."""
    out = [EMPTY_HISTORY]
    for message in messages:
        digest = hashlib.sha256(out[-1].encode())
        digest.update(message_key(message).encode())
        out.append(digest.hexdigest())
    return out
