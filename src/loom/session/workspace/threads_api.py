"""`Workspace.threads`: the history every face shows (list, search, show, export,
delete, restore, rename, doctor).

Reads go to the local store; changes (delete, restore, rename) go through the syncing
store when logged in, so they reach the server too (queued; `loom sync` or the next
session pushes them). Errors a person must act on are `LoomError`s.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from loom.core.errors import BadInput, LoomError

if TYPE_CHECKING:
    from loom.config import LoomConfig
    from loom.core.thread import Thread
    from loom.paths import LoomPaths
    from loom.store.base import SearchHit, ThreadSummary
    from loom.store.doctor import DoctorReport
    from loom.store.local import LocalThreadStore

ExportFormat = Literal["json", "markdown", "md"]


@contextlib.contextmanager
def person_errors() -> Iterator[None]:
    """Storage failures as LoomErrors (the store's own errors are LoomErrors already:
    ThreadNotFound, AmbiguousThreadId, ThreadLocked, ThreadUnreadable)."""
    from loom.store.atomic import StorageError

    try:
        yield
    except StorageError as exc:
        raise LoomError(exc.strerror or str(exc)) from exc


class ThreadsApi:
    def __init__(
        self, paths: LoomPaths, config: LoomConfig, open_store: Callable[[], Any] = lambda: None
    ) -> None:
        """`open_store()`: the store sessions use when it is open already, else None."""
        self.paths = paths
        self.config = config
        self._open_store = open_store
        self._local: LocalThreadStore | None = None

    @property
    def local(self) -> LocalThreadStore:
        if self._local is None:
            from loom.store.local import LocalThreadStore

            self._local = LocalThreadStore(self.paths)
        return self._local

    # -- reading ---------------------------------------------------------------------

    def list(self, limit: int = 50, offset: int = 0) -> list[ThreadSummary]:
        """Newest activity first."""
        return self.local.list(limit, offset)

    def families(
        self, limit: int = 50, offset: int = 0, project: str | None = None
    ) -> list[tuple[ThreadSummary, int]]:
        """`limit` threads no sub-agent made (newest activity first, from `offset`), each
        followed by its sub-agents' threads and theirs: (summary, depth). `project`: only
        those started in that project root (and those recording none)."""
        return self.local.families(limit, offset, project)

    def search(self, query: str, limit: int = 20) -> list[SearchHit]:
        """Ranked full-text search (titles, tags, git metadata, messages)."""
        from loom.store.search_text import fts_query

        if fts_query(query) is None:
            raise BadInput("the query has no words to search for", "try a word or an id")
        return self.local.search(query, limit)

    def resolve(self, ref: str) -> str:
        """The full id for an id or unique prefix (the `T-` may be left out)."""
        with person_errors():
            return self.local.resolve(ref)

    def load(self, ref: str) -> Thread:
        from loom.store.base import ThreadNotFound

        with person_errors():
            thread = self.local.load(self.local.resolve(ref))
            if thread is None:  # deleted between resolve and load
                raise ThreadNotFound(ref)
            return thread

    def private_ids(self) -> frozenset[str]:
        """Ids of every private thread on this machine (the index's and Loom's record)."""
        return self.local.private_ids()

    def deleted(self) -> list[str]:
        """Ids in the trash (restorable for 30 days)."""
        return self.local.deleted()

    def export(self, ref: str, fmt: ExportFormat = "json", output: Path | None = None) -> bytes:
        """The thread as its JSON file or as Markdown; also written to `output` (atomic)."""
        if fmt not in ("json", "markdown", "md"):
            raise BadInput(f"unknown format '{fmt}'", "use --format json or --format markdown")
        thread = self.load(ref)
        if fmt == "json":
            from loom.store.serialize import thread_to_bytes

            data = thread_to_bytes(thread) + b"\n"
        else:
            from loom.core.export import thread_to_markdown

            data = thread_to_markdown(thread).encode()
        if output is not None:
            from loom.store.atomic import atomic_write_bytes

            with person_errors():
                atomic_write_bytes(output, data)
        return data

    def resume_warnings(self, thread: Thread, cwd: Path) -> list[str]:
        """What changed since the thread was last used: its workspace, branch or HEAD."""
        warnings = []
        if thread.workspace_root:
            root = Path(thread.workspace_root)
            here = cwd.resolve()
            if not root.exists():
                warnings.append(f"the thread's workspace {root} no longer exists")
            elif here != root.resolve() and root.resolve() not in here.parents:
                warnings.append(f"the thread's workspace is {root}; you are in {cwd}")
        if thread.git_branch or thread.git_current_commit_sha:
            from loom.gitmeta import detect_repo_status

            status = detect_repo_status(Path(thread.workspace_root or cwd))
            if status is not None and status.branch != thread.git_branch:
                warnings.append(
                    f"the thread was on branch {thread.git_branch or '(detached)'}; "
                    f"the workspace is now on {status.branch or '(detached)'}"
                )
            elif status is not None and status.head_sha != thread.git_current_commit_sha:
                old = (thread.git_current_commit_sha or "none")[:7]
                warnings.append(f"HEAD moved from {old} to {(status.head_sha or 'none')[:7]}")
        return warnings

    # -- changing --------------------------------------------------------------------

    def delete(self, ref: str) -> str:
        """Move a thread to the trash; returns its full id."""
        with person_errors(), self._changing() as store:
            thread_id = store.resolve(ref)
            store.delete(thread_id)
        return thread_id

    def restore(self, ref: str) -> str:
        """Bring a deleted thread back (in the search index at once); returns its id."""
        with person_errors(), self._changing() as store:
            thread_id = store.restore(ref)
        with self.local.fresh_index():
            pass
        return thread_id

    def rename(self, ref: str, title: str) -> Thread:
        title = " ".join(title.split())
        if not title:
            raise BadInput("the title is empty", "give the thread a title with some words")
        thread = self.load(ref)
        thread.metadata.title = title
        thread.touch()
        with person_errors(), self._changing() as store:
            store.save(thread)
        return thread

    def doctor(self, repair: bool = False) -> DoctorReport:
        """Compare the index with the thread files; with `repair`, rebuild and clean up."""
        from loom.store import doctor

        return doctor.repair(self.paths) if repair else doctor.diagnose(self.paths)

    def restore_quarantined(self, name: str) -> str:
        """Move a file someone fixed back from quarantine (`loom doctor --restore`)."""
        from loom.store import doctor

        return doctor.restore(self.paths, name)

    @contextlib.contextmanager
    def _changing(self) -> Iterator[Any]:
        """The workspace's own store when sessions have opened it, else a syncing one
        for this change only (no background worker), closed afterwards."""
        shared = self._open_store()
        if shared is not None:
            yield shared
            return
        from loom.store.factory import open_thread_store

        store = open_thread_store(self.paths, self.config, background=False)
        try:
            yield store
        finally:
            close = getattr(store, "close", None)
            if close is not None:
                close()
