"""LocalThreadStore: one pretty-printed JSON file per thread, written atomically, indexed.

The JSON files are the truth. The index in loom.db (summary rows + FTS5) answers
`list`, `search` and id prefixes, and is brought up to date from the files before every
read (cheap: see `loom.store.index_sync`). A save writes the file first, then updates
the index incrementally; if the index cannot be updated the save still stands and the
next read repairs the index.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from loom.core.ids import is_thread_id
from loom.core.messages import message_text
from loom.core.text import clean_text
from loom.core.thread import Thread, ThreadVisibility
from loom.paths import LoomPaths
from loom.store.atomic import StorageError, fsync_dir, move_into_place, write_temp
from loom.store.base import (
    AmbiguousThreadId,
    SearchHit,
    ThreadLocked,
    ThreadNotFound,
    ThreadSummary,
    ThreadUnreadable,
)
from loom.store.db_repair import is_damage
from loom.store.folder_check import FolderCheck
from loom.store.index import MAX_MESSAGES_INDEXED, WRITES, ThreadIndex, dir_marker
from loom.store.index_sync import (
    ScanReport,
    open_index,
    recheck_shown,
    recover,
    refresh,
    write_transaction,
)
from loom.store.lock import WriterLock, acquire_writer_lock, lock_holder
from loom.store.private_record import PrivateRecord
from loom.store.quarantine import quarantine_file
from loom.store.serialize import thread_to_parts
from loom.store.summary import (
    MAX_INDEXED_CHARS_PER_MESSAGE,
    BadThreadFile,
    IndexRecord,
    parse_thread_bytes,
)

TRASH_RETENTION_S = 30 * 86400
_HOST = socket.gethostname()
log = logging.getLogger(__name__)


class LocalThreadStore:
    def __init__(self, paths: LoomPaths | None = None) -> None:
        self.paths = paths or LoomPaths.from_env()
        self._index: ThreadIndex | None = None
        self.index_note: str | None = None
        """Why the on-disk index is not in use (then an in-memory one is), if it is not."""
        self.last_scan = ScanReport()
        self._cleaned_temp = False
        # Sessions save from worker threads; one connection, used by one at a time.
        self._guard = threading.RLock()
        self.folder_check = FolderCheck(self.paths, self._guard, lambda: self.index)
        self.private = PrivateRecord(self.paths.private_threads_file)
        """Loom's own record of private threads: it wins over a file's `is_private`."""

    # -- paths ---------------------------------------------------------------------

    @property
    def threads_dir(self) -> Path:
        return self.paths.threads_dir

    def path_for(self, thread_id: str) -> Path:
        """The file of a thread; ValueError for an id that would leave the folder."""
        if not thread_id or "/" in thread_id or "\x00" in thread_id or thread_id[0] == ".":
            raise ValueError(f"{thread_id!r} is not a thread id (expected T-<uuidv7>)")
        return self.threads_dir / f"{thread_id}.json"

    @property
    def index(self) -> ThreadIndex:
        with self._guard:
            if self._index is None:
                self._index, self.index_note = open_index(self.paths)
            return self._index

    @contextlib.contextmanager
    def fresh_index(self) -> Iterator[ThreadIndex]:
        """The index, up to date with the files (in memory if loom.db is read-only),
        held for this thread while the block runs."""
        with self._guard:
            self._index, self.last_scan, note = refresh(self.index, self.paths)
            self.index_note = self.index_note or note
            yield self._index

    def close(self) -> None:
        self.folder_check.wait(timeout=30)
        with self._guard:
            if self._index is not None:
                self._index.conn.close()
                self._index = None

    # -- ThreadStore -----------------------------------------------------------------

    def save(self, thread: Thread) -> None:
        """Write the thread durably (temp, fsync, rename, fsync dir), then index it.

        Raises StorageError (previous file intact) when the folder is read-only or full.
        """
        try:
            self.threads_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(
                exc.errno or 0,
                f"could not create {self.threads_dir}: {exc.strerror}; check its permissions",
            ) from exc
        path = self.path_for(thread.id)
        self._keep_private(thread)
        # The temp file lives outside threads/, so only the rename changes that folder.
        tmp = write_temp(path, thread_to_parts(thread), temp_dir=self._temp_dir())
        with self._guard:
            write = self._announce_write(thread.id)
            try:
                move_into_place(tmp, path)
            except StorageError:
                self._withdraw_write(write)
                raise
            try:
                st = os.stat(path)
                with write_transaction(self.index) as index:
                    self._record(index, thread, (st.st_ino, st.st_size, st.st_mtime_ns))
                    if write is not None:
                        after, now = dir_marker(self.threads_dir)[0], time.time_ns()
                        last_scan = index.end_write(write[0], write[1], after, now)
                        self.folder_check.after_save(write[1], after, last_scan, now)
            except (OSError, sqlite3.Error) as exc:
                # The file is saved; the announcement left behind (or the changed
                # folder) makes the next list/search re-index it from the file.
                log.warning(
                    "thread %s saved, but the search index was not updated: %s", thread.id, exc
                )

    def _temp_dir(self) -> Path | None:
        """data/tmp/ when it can be made (same filesystem as threads/), else None.

        The first save of this store also removes temp files that killed saves left."""
        temp = self.paths.data / "tmp"
        try:
            temp.mkdir(exist_ok=True)
        except OSError:
            return None
        if not self._cleaned_temp:
            self._cleaned_temp = True
            from loom.store.tempfiles import clean_stale_temp_files

            clean_stale_temp_files(self.paths)
        return temp

    def _announce_write(self, thread_id: str) -> tuple[int, str] | None:
        """Record "a save of this thread is under way" before its rename (so a crash
        right after the rename is noticed) and the folder's marker as it was."""
        try:
            with write_transaction(self.index) as index:
                write_id = index.begin_write(thread_id, os.getpid(), _HOST, time.time_ns())
                return write_id, dir_marker(self.threads_dir)[0]
        except sqlite3.Error as exc:
            log.warning("search index unavailable while saving %s: %s", thread_id, exc)
            return None

    def _withdraw_write(self, write: tuple[int, str] | None) -> None:
        if write is None:
            return
        with contextlib.suppress(sqlite3.Error), write_transaction(self.index) as index:
            index.conn.execute(f"DELETE FROM {WRITES} WHERE id = ?", (write[0],))

    def _record(self, index: ThreadIndex, thread: Thread, file_stat: tuple[int, int, int]) -> None:
        """Index a thread that was just saved (inside the caller's transaction)."""
        messages = thread.conversation.messages
        before = index.indexed_message_count(thread.id)
        # Re-index the previously last message too: it may have grown (streaming).
        first = 0 if before is None or before > len(messages) else max(before - 1, 0)
        first = min(first, MAX_MESSAGES_INDEXED)
        record = IndexRecord(
            id=thread.id,
            title=clean_text(thread.metadata.title or "(untitled)"),
            version=thread.version,
            created_at=thread.created_at,
            last_activity_at=thread.last_activity_at,
            message_count=len(messages),
            git_branch=thread.git_branch,
            git_remote_url=thread.git_remote_url,
            workspace_root=thread.workspace_root,
            agent_state_kind=str(thread.agent_state.kind),
            is_private=thread.is_private,
            visibility=str(thread.visibility),
            tags=list(thread.metadata.tags),
            commits=list(thread.git_commits),
            message_texts=[
                clean_text(message_text(m)[:MAX_INDEXED_CHARS_PER_MESSAGE])
                for m in messages[first:]
            ],
            first_message=first,
            parent_thread_id=thread.parent_thread_id,
        )
        index.upsert(record, file_stat)

    def save_and_sync(self, thread: Thread) -> None:
        self.save(thread)

    def load(self, thread_id: str) -> Thread | None:
        """The thread, or None if there is no such file.

        An unreadable file is moved to quarantine and ThreadUnreadable is raised.
        """
        try:
            path = self.path_for(thread_id)
            raw = path.read_bytes()
        except (FileNotFoundError, ValueError):
            return None
        try:
            # The index's checks first (same verdict as `loom list`), then the model.
            record = parse_thread_bytes(raw, thread_id)
            if record.repairs:
                from loom.store.repair import write_repaired

                write_repaired(path, raw, record, self.paths.quarantine_dir)
                return self._as_recorded(Thread.model_validate(record.repaired_data))
            return self._as_recorded(_thread_from_bytes(raw))
        except BadThreadFile as exc:
            reason = str(exc)
        except RecursionError:
            reason = "the file nests JSON too deeply to read safely"
        except ValueError as exc:  # pydantic's ValidationError
            detail = " ".join(line.strip() for line in str(exc).splitlines()[:3])
            reason = f"the file does not match the thread format ({detail})"
        moved = quarantine_file(path, self.paths.quarantine_dir, reason)
        self._unindex(thread_id)
        raise ThreadUnreadable(thread_id, reason, str(moved) if moved else None)

    def list(self, limit: int = 50, offset: int = 0) -> list[ThreadSummary]:
        """Newest activity first, from `offset` (the web sidebar pages through it)."""
        rows = self._query(lambda index: index.list(limit, offset))
        return [ThreadSummary(**self._row_as_recorded(row)) for row in rows]

    def families(
        self, limit: int = 50, offset: int = 0, project: str | None = None
    ) -> list[tuple[ThreadSummary, int]]:
        """A page of `limit` threads no sub-agent made, each followed by its sub-agents'
        threads (and theirs): (summary, depth), depth 0 for the top level; `project`:
        only the families started in that project root."""
        from loom.store.family import family_rows

        rows = self._query(lambda index: family_rows(index, limit, offset, project))
        return [
            (ThreadSummary(**self._row_as_recorded({k: v for k, v in row.items() if k != "depth"})),
             row["depth"])
            for row in rows
        ]  # fmt: skip

    def search(self, query: str, limit: int = 20) -> list[SearchHit]:
        """Ranked full-text search over titles, tags, git metadata and messages."""
        self._complete_messages()
        hits = self._query(lambda index: self._complete_then_search(index, query, limit))
        return [
            SearchHit(ThreadSummary(**self._row_as_recorded(row)), snippet, rank)
            for row, snippet, rank in hits
        ]

    def _complete_messages(self) -> None:
        """Write the message rows a big first index left out, letting this store's saves
        in between groups. A failure here (a damaged or swapped index) leaves the rest
        to `_complete_then_search`, under the store's damage handling."""
        from loom.store.index_messages import complete_messages, messages_pending

        with self.fresh_index() as index:
            if not messages_pending(index):
                return
        with contextlib.suppress(sqlite3.Error):
            complete_messages(index, self.paths, hold=lambda: self._guard)

    def _complete_then_search(
        self, index: ThreadIndex, query: str, limit: int
    ) -> list[tuple[dict[str, Any], str, float]]:
        """Search once every message is indexed (a big first index leaves the message rows
        to the first search: loom.store.index_messages)."""
        from loom.store.index_messages import complete_messages

        complete_messages(index, self.paths)
        return index.search(query, limit)

    def _query(self, query: Callable[[ThreadIndex], Any]) -> Any:
        """Run `query` on the fresh index; a damaged loom.db is rebuilt and asked again."""
        with self.fresh_index() as index:
            try:
                result = query(index)
                shown = [(r[0] if isinstance(r, tuple) else r) for r in result]
                ids = [r["id"] for r in shown if isinstance(r, dict)]
                if recheck_shown(index, self.paths, ids):  # edited in place
                    result = query(index)
                return result
            except sqlite3.DatabaseError as exc:
                if not is_damage(exc):
                    raise
                self._index, note = recover(index, self.paths, str(exc))
                self.index_note = note
                log.warning("%s", note)
                return query(self._index)

    def private_ids(self) -> frozenset[str]:
        """Every thread this machine holds as private: the index's and Loom's own record
        (PrivateRecordUnreadable when the record cannot be read)."""
        return frozenset(self._query(lambda index: index.private_ids())) | self.private.ids()

    def resolve(self, ref: str) -> str:
        """The full id for an id or unique id prefix (`T-` optional), like git."""
        ref = ref.strip()
        if not ref:
            raise ThreadNotFound(ref)
        if is_thread_id(ref) and self.path_for(ref).exists():
            return ref
        matches = self._query(lambda index: index.resolve(ref, limit=10))
        if not matches:
            raise ThreadNotFound(ref)
        if len(matches) > 1:
            raise AmbiguousThreadId(ref, matches)
        return matches[0]

    def delete(self, thread_id: str) -> None:
        """Soft delete: move the file to the trash (restorable for 30 days)."""
        if not is_thread_id(thread_id) or not self.path_for(thread_id).exists():
            raise ThreadNotFound(thread_id)
        holder = lock_holder(self.paths.locks_dir, thread_id)
        if holder:
            raise ThreadLocked(thread_id, holder)
        source = self.path_for(thread_id)
        trash = self.paths.trash_dir
        _move(source, trash / source.name, f"could not delete {thread_id}")
        self._unindex(thread_id)
        self._purge_old_trash()

    def restore(self, ref: str) -> str:
        """Bring a deleted thread back; `ref` may be a prefix. Returns the full id."""
        thread_id = self._resolve_deleted(ref)
        target = self.path_for(thread_id)
        if target.exists():
            raise StorageError(0, f"{thread_id} exists already; nothing to restore")
        self.threads_dir.mkdir(parents=True, exist_ok=True)
        _move(self.paths.trash_dir / target.name, target, f"could not restore {thread_id}")
        return thread_id

    def deleted(self) -> list[str]:
        try:
            names = os.listdir(self.paths.trash_dir)
        except FileNotFoundError:
            return []
        return sorted(n[:-5] for n in names if n.startswith("T-") and n.endswith(".json"))

    # -- writer lock -------------------------------------------------------------------

    def acquire_writer(self, thread_id: str) -> WriterLock:
        """Hold the writer lock of `thread_id` until `release()` (ThreadLocked if taken)."""
        return acquire_writer_lock(self.paths.locks_dir, thread_id)

    @contextlib.contextmanager
    def open_for_writing(self, thread_id: str) -> Iterator[WriterLock]:
        lock = self.acquire_writer(thread_id)
        try:
            yield lock
        finally:
            lock.release()

    # -- helpers -------------------------------------------------------------------

    def _keep_private(self, thread: Thread) -> None:
        """Before a save: a private thread is recorded as such (StorageError when the
        record cannot be written), and a recorded one stays private whatever it says."""
        if thread.is_private:
            try:
                self.private.add(thread.id)
            except OSError as exc:
                raise StorageError(
                    exc.errno or 0,
                    f"could not record {thread.id} as private in {self.private.path}: "
                    f"{exc.strerror or exc}",
                ) from exc
        else:
            self._as_recorded(thread)

    def _row_as_recorded(self, row: dict[str, Any]) -> dict[str, Any]:
        """An index row, private when Loom's record says so (an unreadable record:
        every row private, so that nothing is shown as shareable by mistake)."""
        if row.get("is_private"):
            return row
        try:
            recorded = self.private.holds(row["id"])
        except OSError:
            recorded = True
        return {**row, "is_private": True, "visibility": "private"} if recorded else row

    def _as_recorded(self, thread: Thread) -> Thread:
        """`thread`, made private again when Loom's record says it is (its file was
        changed behind Loom's back)."""
        try:
            recorded = self.private.holds(thread.id)
        except OSError as exc:  # sync refuses to push while this is so
            log.warning("%s", exc)
            return thread
        if recorded and not thread.is_private:
            log.warning("thread %s is private in Loom's record; its file said otherwise", thread.id)
            thread.is_private = True
            thread.visibility = ThreadVisibility.PRIVATE
        return thread

    def _unindex(self, thread_id: str) -> None:
        with self._guard, contextlib.suppress(sqlite3.Error), write_transaction(self.index):
            self.index.remove(thread_id)

    def _resolve_deleted(self, ref: str) -> str:
        ref = ref.strip()
        full = ref if ref.startswith("T-") else f"T-{ref}"
        matches = [tid for tid in self.deleted() if tid.startswith(full)]
        if not ref or not matches:
            raise ThreadNotFound(ref)
        if len(matches) > 1 and full not in matches:
            raise AmbiguousThreadId(ref, matches)
        return full if full in matches else matches[0]

    def _purge_old_trash(self) -> None:
        cutoff = time.time() - TRASH_RETENTION_S
        for tid in self.deleted():
            path = self.paths.trash_dir / f"{tid}.json"
            with contextlib.suppress(OSError):
                if path.stat().st_ctime < cutoff:  # ctime: when it was moved to the trash
                    path.unlink()


def _thread_from_bytes(raw: bytes) -> Thread:
    """The Thread in a file the index accepted. pydantic's own JSON parser refuses
    what the standard library reads (a lone surrogate escape, nesting past 200
    levels); those are validated from the parsed objects, which repairs them."""
    try:
        return Thread.from_json(raw)
    except ValueError as exc:
        if "json_invalid" not in str(exc) and "recursion" not in str(exc):
            raise
    import json

    thread = Thread.model_validate(json.loads(raw))
    from loom.core.messages import clean_message
    from loom.core.text import clean_text

    for message in thread.messages:  # the stdlib parser lets lone surrogates through
        clean_message(message)
    if thread.metadata.title is not None:
        thread.metadata.title = clean_text(thread.metadata.title)
    try:
        thread.model_dump(mode="json")  # pydantic cannot write past ~255 levels either
    except ValueError:
        raise BadThreadFile("the file nests JSON too deeply to read safely") from None
    return thread


def _move(source: Path, target: Path, what: str) -> None:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        os.rename(source, target)
        fsync_dir(target.parent)
        fsync_dir(source.parent)
    except OSError as exc:
        raise StorageError(exc.errno or 0, f"{what}: {exc.strerror or exc}") from exc
