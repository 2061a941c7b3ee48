"""The ThreadStore protocol every store (local, syncing) implements, and its errors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from loom.core.errors import BadInput, Busy, NotFound

if TYPE_CHECKING:  # this module stays pydantic-free: `loom list` imports it at start-up
    from loom.core.thread import Thread


class HeldLock(Protocol):
    """A thread's writer lock (loom.store.lock.WriterLock, which imports this module)."""

    @property
    def held(self) -> bool: ...

    def release(self) -> None: ...


class ThreadNotFound(NotFound):
    def __init__(self, ref: str) -> None:
        super().__init__(f"no thread matches '{ref}'", "run `loom list` to see thread ids")
        self.ref = ref


class AmbiguousThreadId(NotFound):
    def __init__(self, ref: str, candidates: list[str]) -> None:
        shown = ", ".join(candidates[:5]) + (" ..." if len(candidates) > 5 else "")
        super().__init__(
            f"'{ref}' matches {len(candidates)} threads ({shown})", "type more of the id"
        )
        self.ref = ref
        self.candidates = candidates


class ThreadUnreadable(BadInput):
    """A thread file exists but cannot be read; it has been moved to quarantine."""

    def __init__(self, thread_id: str, reason: str, moved_to: str | None) -> None:
        where = f"; moved to {moved_to}" if moved_to else ""
        super().__init__(
            f"thread {thread_id} could not be read ({reason}){where}", "run `loom doctor`"
        )
        self.thread_id = thread_id
        self.reason = reason
        self.moved_to = moved_to


class ThreadLocked(Busy):
    """Another process holds the writer lock of a thread."""

    def __init__(self, thread_id: str, holder: str) -> None:
        super().__init__(
            f"thread {thread_id} is open for writing by {holder}",
            "close that session first (a lock left by a dead process is recovered automatically)",
        )
        self.thread_id = thread_id
        self.holder = holder


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
    parent_thread_id: str | None = None  # a sub-agent's thread: the one that started it


@dataclass(frozen=True)
class SearchHit:
    summary: ThreadSummary
    snippet: str
    rank: float


class ThreadStore(Protocol):
    def load(self, thread_id: str) -> Thread | None: ...
    def resolve(self, ref: str) -> str: ...  # id or unique prefix -> id (ThreadNotFound)
    def acquire_writer(self, thread_id: str) -> HeldLock: ...  # ThreadLocked if taken
    def save(self, thread: Thread) -> None: ...
    def list(self, limit: int = 50) -> list[ThreadSummary]: ...
    def delete(self, thread_id: str) -> None: ...
    def search(self, query: str, limit: int = 20) -> list[SearchHit]: ...
    def save_and_sync(self, thread: Thread) -> None: ...
