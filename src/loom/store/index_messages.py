"""The message rows a big first index left for later, written before the next search.

A first index of many threads (index_sync.ensure_fresh, PROGRESS_MIN_FILES files or
more) writes what `loom list`, `show`, resume and the web's list need: the summary rows
and the headers. FTS5 indexing the messages is ~88% of the writer's work, so those rows
are left out (each thread's `indexed_messages` stays 0) and MESSAGES_PENDING_KEY is set.
Every search first calls `complete_messages`, which re-reads the files of the threads
still behind and adds their message rows in big transactions (index_bulk.bulk_build),
then clears the key: a search never answers from half the messages.

Races: each write transaction re-checks that a thread's row is still as listed (same
file stat, no message indexed). A save of the thread meanwhile indexed all its messages
itself (`indexed_messages` 0 makes a save start at its first message) and wins; a file
changed without a save is re-read in full, as a scan would. An interrupted completion
keeps what it committed; the key stays set and the next search does the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from loom.paths import LoomPaths
from loom.store.index import MESSAGES_PENDING_KEY, ThreadIndex
from loom.store.index_bulk import BULK_COMMIT_BYTES, bulk_build, bulk_read_ahead, grouped
from loom.store.index_parse import Parsed, parsed_batches
from loom.store.index_sync import BATCH, index_files, write_transaction
from loom.store.summary import IndexRecord

Progress = Callable[[int, int], None]
"""`progress(done, total)`: threads whose messages are indexed so far, from (0, total)."""


def messages_pending(index: ThreadIndex) -> bool:
    return index.get_state(MESSAGES_PENDING_KEY) is not None


def complete_messages(
    index: ThreadIndex,
    paths: LoomPaths,
    progress: Progress | None = None,
    hold: Callable[[], AbstractContextManager[Any]] = nullcontext,
) -> int:
    """Add the message rows a big first index left out (a no-op when none are pending);
    returns how many threads got theirs. `hold()` is entered around each use of the
    index and left between groups (a store's lock: its saves go on meanwhile instead
    of waiting for the whole completion, a minute at 100k threads)."""
    with hold():
        if not messages_pending(index):
            return 0
        behind = dict(index.behind())
    ids = list(behind)
    if progress is not None and ids:
        progress(0, len(ids))
    completed = 0
    if ids:
        sizes = [stat[1] or 0 for stat in behind.values()]
        batches = [ids[i : i + BATCH] for i in range(0, len(ids), BATCH)]
        parsed = parsed_batches(paths.threads_dir, batches, bulk_read_ahead(sizes, BATCH))
        done = 0
        for group in grouped(parsed, BULK_COMMIT_BYTES):
            with hold(), bulk_build(index.conn), write_transaction(index):
                completed += _complete_group(index, paths, group, behind)
            done += len(group)
            if progress is not None:
                progress(done, len(ids))
    with hold(), write_transaction(index):
        if not index.behind():
            index.delete_state(MESSAGES_PENDING_KEY)
    return completed


def _complete_group(
    index: ThreadIndex,
    paths: LoomPaths,
    group: list[Parsed],
    as_listed: dict[str, tuple[int | None, int | None, int | None]],
) -> int:
    """Message rows for the files of `group` that are as the index listed them; files
    that changed since (or went, or cannot be read) are re-indexed as a scan would,
    if their row is still the one listed."""
    same: list[tuple[IndexRecord, tuple[int, int, int]]] = []
    changed: list[Parsed] = []
    for item in group:
        tid, stat, record, _raw = item
        if isinstance(record, IndexRecord) and not record.repairs and stat == as_listed[tid]:
            assert stat is not None
            same.append((record, stat))
        else:
            changed.append(item)
    completed = len(index.add_pending_messages(same, as_listed))
    if changed:
        still = dict(index.behind([item[0] for item in changed]))
        redo = [item for item in changed if still.get(item[0]) == as_listed[item[0]]]
        completed += len(index_files(index, paths, redo).indexed)
    return completed


def recent_with_first_words(
    index: ThreadIndex, paths: LoomPaths, workspace_root: str | None, limit: int
) -> list[dict[str, Any]]:
    """`index.recent(...)`; while message rows are pending, the first words of the
    threads still without theirs are read from their files (the resume picker shows
    them)."""
    rows = index.recent(workspace_root, limit)
    if not messages_pending(index):
        return rows
    from loom.store.index import first_words
    from loom.store.index_parse import parse_file

    folder = str(paths.threads_dir)
    for row in rows:
        if row["first_words"] or not row["message_count"]:
            continue
        record = parse_file(folder, row["id"])[2]
        if isinstance(record, IndexRecord) and record.message_texts:
            row["first_words"] = first_words(record.message_texts[0])
    return rows
