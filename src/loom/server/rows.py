"""From a thread to the columns the server stores, and back."""

from __future__ import annotations

import secrets
from datetime import UTC
from typing import Any

from loom.core.clock import parse_iso
from loom.core.messages import message_text
from loom.core.thread import Thread
from loom.server.history import prefix_hashes

SEARCH_TEXT_MAX_CHARS = 400_000  # PostgreSQL's tsvector tops out near 1 MB


class BadThread(ValueError):
    """A thread the server will not store; the message says why."""


def clean(text: str | None) -> str | None:
    """PostgreSQL text cannot hold NUL characters; drop them from indexed columns."""
    return None if text is None else text.replace("\x00", "")


def normalize_timestamp(value: str, field: str) -> str:
    """UTC, milliseconds, `Z`: sorts as text in time order."""
    try:
        moment = parse_iso(value).astimezone(UTC)
    except (ValueError, OverflowError) as exc:
        raise BadThread(f"{field} '{value[:40]}' is not an ISO 8601 timestamp") from exc
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:"
        f"{moment.minute:02d}:{moment.second:02d}.{moment.microsecond // 1000:03d}Z"
    )


def search_text(thread: Thread) -> str:
    parts: list[str] = [
        thread.metadata.title or "",
        thread.git_branch or "",
        thread.git_remote_url or "",
        " ".join(thread.git_commits),
        " ".join(thread.metadata.tags),
    ]
    parts.extend(message_text(m) for m in thread.messages)
    # the decisions the session logged are found like its words
    parts.extend(f"{n.title}\n{n.description}" for n in thread.decision_graph.nodes)
    text = clean("\n".join(p for p in parts if p)) or ""
    return text[:SEARCH_TEXT_MAX_CHARS]


def thread_columns(thread: Thread, hashes: list[str] | None = None) -> dict[str, Any]:
    """Denormalised columns for a thread (everything but owner, org and share token).

    `hashes` are the thread's prefix hashes (history.prefix_hashes) if already computed.
    """
    if thread.is_private:
        raise BadThread(
            "this thread is marked private (local-only); private threads are not synced"
        )
    full_hash = (hashes or prefix_hashes(thread.messages))[-1]
    return {
        "version": thread.version,
        "title": clean(thread.metadata.title) or "",
        "agent_state_kind": str(thread.agent_state.kind),
        "message_count": len(thread.messages),
        "history_hash": full_hash,
        "created_at": normalize_timestamp(thread.created_at, "created_at"),
        "updated_at": normalize_timestamp(thread.updated_at, "updated_at"),
        "last_activity_at": normalize_timestamp(thread.last_activity_at, "last_activity_at"),
        "git_branch": clean(thread.git_branch),
        "git_remote_url": clean(thread.git_remote_url),
        "visibility": str(thread.visibility),
        "is_shared_with_support": thread.is_shared_with_support,
        "data": thread.model_dump_json(),
        "search_text": search_text(thread),
    }


def new_share_token() -> str:
    return secrets.token_urlsafe(24)
