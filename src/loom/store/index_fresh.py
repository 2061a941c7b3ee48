"""The thread index for `loom list` and `loom search`, with the stdlib only.

`loom.cli.fast` answers those two commands before Typer, pydantic or any SDK is
imported; this module is its way to the index (the Workspace's `threads.list` and
`threads.search` read the same index through the store).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing costs start-up time
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from loom.store.index import ThreadIndex


def has_search_words(query: str) -> bool:
    """Whether a search query has anything to search for."""
    from loom.store.search_text import fts_query

    return fts_query(query) is not None


def fresh_index(
    warn: Callable[[str], None], progress: Callable[[int, int], None] | None = None
) -> ThreadIndex:
    """The index, up to date with the thread files; `warn(line)` hears about files
    moved to quarantine, skipped files and an index that could not be used."""
    return _index_if_fresh() or _refreshed_index(warn, progress)


def answer_from_index(
    query: Callable[[ThreadIndex], Any],
    warn: Callable[[str], None],
    progress: Callable[[int, int], None] | None = None,
    *,
    search_progress: Callable[[int, int], None] | None = None,
    search: bool = False,
) -> Any:
    """`query` on the fresh index; a damaged loom.db is rebuilt (keeping what else it
    holds, see loom.store.db_repair) and asked again, and `warn` says what happened.
    `search`: the message rows a big first index left out are written first
    (loom.store.index_messages), telling `search_progress`."""
    import sqlite3

    index = fresh_index(warn, progress)
    try:
        if search:
            _complete_messages(index, search_progress)
        result = query(index)
        if _recheck(index, result):  # a shown file was edited in place
            result = query(index)
        return result
    except sqlite3.DatabaseError as exc:
        from loom.store.db_repair import is_damage

        if not is_damage(exc):
            raise
        from loom.paths import LoomPaths
        from loom.store.index_sync import recover

        index, note = recover(index, LoomPaths.from_env(), str(exc))
        warn(f"note: {note}")
        if search:
            _complete_messages(index, search_progress)
        return query(index)


def _complete_messages(index: ThreadIndex, progress: Callable[[int, int], None] | None) -> None:
    """The pending message rows, if any (the modules that write them are imported only
    then: `loom search` starts fast)."""
    from loom.store.index import MESSAGES_PENDING_KEY

    if index.get_state(MESSAGES_PENDING_KEY) is None:
        return
    from loom.paths import LoomPaths
    from loom.store.index_messages import complete_messages

    complete_messages(index, LoomPaths.from_env(), progress)


def _recheck(index: ThreadIndex, result: Any) -> bool:
    """Re-index the files of the rows in `result` (list rows, or search hits whose
    first item is the row) that changed in place; True if any did.

    The common case (nothing changed) costs one query and a stat per row, with `os`
    only: the store's scanning code is imported when a file did change."""
    from loom._xdg import roots
    from loom.store.index import THREADS

    ids = [(item[0] if isinstance(item, tuple) else item)["id"] for item in result]
    if not ids:
        return False
    folder = os.path.join(roots()[0], "threads")
    rows = index.conn.execute(
        f"SELECT id, file_ino, file_size, file_mtime_ns FROM {THREADS} "
        f"WHERE id IN ({','.join('?' * len(ids))})",
        ids,
    )
    for tid, ino, size, mtime in rows:
        try:
            st = os.stat(os.path.join(folder, f"{tid}.json"))
        except OSError:
            break
        if (st.st_ino, st.st_size, st.st_mtime_ns) != (ino, size, mtime):
            break
    else:
        return False
    from loom.paths import LoomPaths
    from loom.store.index_sync import recheck_shown

    try:
        return recheck_shown(index, LoomPaths.from_env(), ids)
    except OSError:
        return False


def _index_if_fresh() -> ThreadIndex | None:
    """The common case in a few ms: loom.db exists and no thread file changed since the
    last scan. No pathlib, no writes; anything unexpected defers to `_refreshed_index`."""
    import sqlite3

    from loom._xdg import roots
    from loom.store.db import connect, migrate
    from loom.store.index import COMPONENT, MIGRATIONS, ThreadIndex

    data = roots()[0]
    database = os.path.join(data, "loom.db")
    if not os.path.exists(database):
        return None
    try:
        conn = connect(database)
    except sqlite3.Error:
        return None
    try:
        index = ThreadIndex(conn)
        if migrate(conn, COMPONENT, MIGRATIONS) != len(MIGRATIONS):
            raise sqlite3.DatabaseError("index schema is newer than this Loom")
        if index.is_fresh(os.path.join(data, "threads")):
            return index
    except sqlite3.Error:
        pass
    conn.close()
    return None


def _refreshed_index(
    warn: Callable[[str], None], progress: Callable[[int, int], None] | None
) -> ThreadIndex:
    from loom.paths import LoomPaths
    from loom.store.index_sync import open_index, refresh

    paths = LoomPaths.from_env()
    index, note = open_index(paths)

    index, report, fallback = refresh(index, paths, progress=progress)
    note = note or fallback
    if note:
        warn(f"note: {note}")
    if report.quarantined:
        warn(
            f"moved {len(report.quarantined)} unreadable thread file(s) to "
            f"{paths.quarantine_dir} (see `loom doctor`)"
        )
    for path, why in report.unreadable:
        warn(f"skipped {path}: {why}")
    return index
