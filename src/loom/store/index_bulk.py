"""Settings and grouping for a big (re)build of the thread index (the first index).

A first index of 100,000 threads spends most of its time in SQLite's FTS5 writing the
message rows. FTS5 keeps new rows in an in-memory hash and writes them out as a new
segment when the hash is full (1 MB by default) or the transaction ends; segments are
then merged, four at a time, level after level, so each row is rewritten once per
level. A big build therefore commits in large groups of files (BULK_COMMIT_BYTES) and
raises the FTS5 hash to BULK_HASH_BYTES while it runs: fewer, bigger segments and
fewer merge levels. What the index holds is the same (same rows, same tokens: only
how they are laid out in pages differs), so searches find and rank the same.

No fsync during the build (the index is rebuilt from the files if a crash damages it,
see loom.store.db_repair), and the WAL, grown to a group's size, is emptied at the
end so loom.db keeps its size.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterable, Iterator

from loom.store.index import MESSAGES
from loom.store.index_parse import Parsed

BULK_COMMIT_BYTES = 32_000_000
"""Thread files (by size on disk) written per transaction in a big build."""
MAX_READ_AHEAD = 64
BULK_HASH_BYTES = 8 * 1024 * 1024
DEFAULT_HASH_BYTES = 1024 * 1024  # FTS5's own default


@contextlib.contextmanager
def bulk_build(conn: sqlite3.Connection) -> Iterator[None]:
    """Settings for a big build of the index over `conn`, put back afterwards."""
    conn.execute("PRAGMA synchronous = OFF")
    _set_hash(conn, BULK_HASH_BYTES)
    try:
        yield
    finally:
        _set_hash(conn, DEFAULT_HASH_BYTES)
        conn.execute("PRAGMA synchronous = NORMAL")
        with contextlib.suppress(sqlite3.Error):  # busy: a later checkpoint does it
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _set_hash(conn: sqlite3.Connection, size: int) -> None:
    """FTS5's pending-rows hash size (kept in the table's config: other writers see it;
    an SQLite without the setting just builds more slowly)."""
    with contextlib.suppress(sqlite3.Error):
        conn.execute(f"INSERT INTO {MESSAGES} ({MESSAGES}, rank) VALUES ('hashsize', ?)", (size,))


def grouped(batches: Iterable[list[Parsed]], min_bytes: int) -> Iterator[list[Parsed]]:
    """Parsed batches joined until their files add up to `min_bytes` (the last group
    may be smaller)."""
    group: list[Parsed] = []
    size = 0
    for batch in batches:
        group.extend(batch)
        size += sum(item[1][1] for item in batch if item[1] is not None)
        if size >= min_bytes:
            yield group
            group, size = [], 0
    if group:
        yield group


def bulk_read_ahead(sizes: list[int], batch: int) -> int:
    """How many batches of `batch` files the parsing workers should read ahead so that
    the next group is ready when the writer has written one (they overlap)."""
    if not sizes:
        return 1
    per_batch = max(sum(sizes) / len(sizes) * batch, 1)
    return max(2, min(MAX_READ_AHEAD, int(BULK_COMMIT_BYTES / per_batch) + 1))
