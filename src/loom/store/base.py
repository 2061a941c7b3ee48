"""The ThreadStore protocol every store (local, syncing) implements, and its errors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from loom.core.thread import Thread


class ThreadNotFound(LookupError):
    def __init__(self, ref: str) -> None:
        super().__init__(f"no thread matches '{ref}'; run `loom list` to see thread ids")
        self.ref = ref


class AmbiguousThreadId(LookupError):
    def __init__(self, ref: str, candidates: list[str]) -> None:
        shown = ", ".join(candidates[:5]) + (" ..." if len(candidates) > 5 else "")
        super().__init__(
            f"'{ref}' matches {len(candidates)} threads ({shown}); type more of the id"
        )
        self.ref = ref
        self.candidates = candidates


@dataclass(frozen=True)
class ThreadSummary:
    """What listing needs, read from the index without loading the thread file."""

    id: str
    title: str
    version: int
    last_activity_at: str
    message_count: int
    git_branch: str | None = None
    git_remote_url: str | None = None
    workspace_root: str | None = None
    agent_state_kind: str | None = None
    is_private: bool = False
    visibility: str = "organization"


@dataclass(frozen=True)
class SearchHit:
    summary: ThreadSummary
    snippet: str
    rank: float


class ThreadStore(Protocol):
    def load(self, thread_id: str) -> Thread | None: ...
    def save(self, thread: Thread) -> None: ...
    def list(self, limit: int = 50) -> list[ThreadSummary]: ...
    def delete(self, thread_id: str) -> None: ...
    def search(self, query: str, limit: int = 20) -> list[SearchHit]: ...
    def save_and_sync(self, thread: Thread) -> None: ...
