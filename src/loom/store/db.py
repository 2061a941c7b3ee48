"""The local SQLite database (`loom.db`): one connection helper and ordered migrations.

Each component (the thread index, permission grants, ...) owns an ordered list of small
migration functions; `migrate` applies the ones not yet applied, in one transaction
each, and records the component's version in `_migrations`. Add a migration by
appending a function to the component's list; never edit or reorder applied ones.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Sequence

TYPE_CHECKING = False  # pathlib stays unimported on the `loom list` fast path
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

Migration = Callable[[sqlite3.Connection], None]

BUSY_TIMEOUT_MS = 5000


def connect(
    path: Path | str, *, readonly: bool = False, check_same_thread: bool = True
) -> sqlite3.Connection:
    """Open `loom.db` in WAL mode with a busy timeout (creating its folder if needed).

    `check_same_thread=False` lets a caller that serialises access itself (with a lock)
    use the connection from worker threads.
    """
    timeout = BUSY_TIMEOUT_MS / 1000
    if readonly:
        conn = sqlite3.connect(
            f"file:{path}?mode=ro",
            uri=True,
            timeout=timeout,
            check_same_thread=check_same_thread,
            factory=_Connection,
        )
    else:
        os.makedirs(os.path.dirname(os.fspath(path)), exist_ok=True)
        conn = sqlite3.connect(
            path,
            timeout=timeout,
            isolation_level=None,
            check_same_thread=check_same_thread,
            factory=_Connection,
        )
    try:
        if not readonly:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    except UnicodeDecodeError as exc:  # damaged bytes read back as text: a damaged file
        conn.close()
        raise sqlite3.DatabaseError(f"{path} is damaged ({exc})") from None
    except BaseException:
        conn.close()
        raise
    conn.row_factory = sqlite3.Row
    return conn


def _damaged(exc: UnicodeDecodeError) -> sqlite3.DatabaseError:
    return sqlite3.DatabaseError(f"database disk image is malformed (text not UTF-8: {exc})")


# A damaged file can make SQLite report an error, or return text, that is not UTF-8:
# Python then raises UnicodeDecodeError where every caller expects a DatabaseError (and
# rebuilds on it). These two classes make it one.
class _Cursor(sqlite3.Cursor):
    def execute(self, *args: Any) -> _Cursor:
        try:
            return super().execute(*args)
        except UnicodeDecodeError as exc:
            raise _damaged(exc) from exc

    def executemany(self, *args: Any) -> _Cursor:
        try:
            return super().executemany(*args)
        except UnicodeDecodeError as exc:
            raise _damaged(exc) from exc

    def executescript(self, *args: Any) -> sqlite3.Cursor:
        try:
            return super().executescript(*args)
        except UnicodeDecodeError as exc:
            raise _damaged(exc) from exc

    def fetchone(self) -> Any:
        try:
            return super().fetchone()
        except UnicodeDecodeError as exc:
            raise _damaged(exc) from exc

    def fetchmany(self, size: int | None = None) -> list[Any]:
        try:
            return super().fetchmany(self.arraysize if size is None else size)
        except UnicodeDecodeError as exc:
            raise _damaged(exc) from exc

    def fetchall(self) -> list[Any]:
        try:
            return super().fetchall()
        except UnicodeDecodeError as exc:
            raise _damaged(exc) from exc

    def __next__(self) -> Any:
        try:
            return super().__next__()
        except UnicodeDecodeError as exc:
            raise _damaged(exc) from exc


class _Connection(sqlite3.Connection):
    def cursor(self, factory: Any = _Cursor) -> Any:
        return super().cursor(factory)

    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> Any:
        return self.cursor().executemany(sql, parameters)

    def executescript(self, script: str, /) -> Any:
        return self.cursor().executescript(script)


def migrate(conn: sqlite3.Connection, component: str, migrations: Sequence[Migration]) -> int:
    """Apply `component`'s pending migrations; return its schema version afterwards."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (component TEXT PRIMARY KEY, version INTEGER)"
    )
    current = _version(conn, component)
    for number, step in enumerate(migrations[current:], start=current + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            # another connection (a session opened at the same moment) may have applied
            # it between our read and this write lock: read again under the lock
            if _version(conn, component) >= number:
                conn.execute("COMMIT")
                continue
            step(conn)
            conn.execute(
                "INSERT INTO _migrations (component, version) VALUES (?, ?) "
                "ON CONFLICT(component) DO UPDATE SET version = excluded.version",
                (component, number),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    if len(migrations) > current:
        save_schema_copy(conn)
    return max(current, len(migrations))


def schema_copy_path(database: str) -> str:
    return f"{database}.schema.json"


def save_schema_copy(conn: sqlite3.Connection) -> None:
    """Keep the tables' CREATE statements and root pages beside loom.db, so a repair
    can read tables whose schema entry a damaged page garbled (store/db_repair.py)."""
    import json

    row = conn.execute("PRAGMA database_list").fetchone()
    database = row[2] if row else ""
    if not database:
        return  # in memory
    tables = {
        name: [sql, rootpage]
        for name, sql, rootpage in conn.execute(
            "SELECT name, sql, rootpage FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL"
        )
    }
    import contextlib

    from loom.store.atomic import atomic_write_bytes

    with contextlib.suppress(OSError):  # only a help for repairs
        atomic_write_bytes(_as_path(schema_copy_path(database)), json.dumps(tables).encode())


def _as_path(text: str) -> Path:
    from pathlib import Path

    return Path(text)


def _version(conn: sqlite3.Connection, component: str) -> int:
    row = conn.execute(
        "SELECT version FROM _migrations WHERE component = ?", (component,)
    ).fetchone()
    return row[0] if row else 0


# -- one connection per database and thread, shared -----------------------------------------

# In WAL mode every open connection holds a shared lock on loom.db, and SQLite defers
# closing a file while the process holds a lock on it: a connection per session left a
# descriptor behind each stopped session until the whole process let go of loom.db. So
# the many short-lived users of loom.db (each session's grants and decision recorder)
# share their thread's connection instead of owning one.
_threads = threading.local()
_DATABASES_KEPT = 4  # a process uses one loom.db; tests use one per test


def thread_connection(
    database: Path, component: str, migrations: Sequence[Migration]
) -> sqlite3.Connection:
    """This thread's connection to `database`, with `component` migrated."""
    open_here: dict[Path, tuple[sqlite3.Connection, set[str]]] = _threads.__dict__.setdefault(
        "by_db", {}
    )
    entry = open_here.get(database)
    if entry is None:
        entry = open_here[database] = (connect(database), set())
        while len(open_here) > _DATABASES_KEPT:
            open_here.pop(next(iter(open_here)))[0].close()
    conn, migrated = entry
    if component not in migrated:
        migrate(conn, component, migrations)
        migrated.add(component)
    return conn


def drop_thread_connection(database: Path) -> None:
    """Close this thread's connection to `database` (after an error: never reused)."""
    entry = _threads.__dict__.get("by_db", {}).pop(database, None)
    if entry is not None:
        entry[0].close()
