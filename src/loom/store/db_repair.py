"""A damaged `loom.db`: moved aside, rebuilt, and what only it held carried over.

The thread index can always be rebuilt from the thread files. Other components keep
things only the database holds (permission grants, MCP approvals, ...): their tables
are copied from the damaged file as far as SQLite can still read them, row by row
when a whole-table copy fails, and the report says what was kept and what was lost.

Damage shows as `sqlite3.DatabaseError` ("database disk image is malformed", "file is
not a database", a corrupt FTS structure, ...) on any statement, or in `PRAGMA
quick_check`. `is_damage` tells it from an ordinary error (busy, read-only, full).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from pathlib import Path

INDEX_PREFIX = "thread_index"
_DAMAGE_WORDS = (
    "malformed",
    "not a database",
    "corrupt",
    "no such table",
    "no such column",
    "disk i/o error",
    "tokenizer",
    "vtable constructor",
    "fts5",  # a damaged full-text index
    "could not decode",  # text that is not UTF-8
    "sql logic error",  # what a damaged FTS table answers a MATCH with
)


class RebuildReport:
    def __init__(self, database: Path, cause: str) -> None:
        self.database = database
        self.cause = cause
        self.moved_to: Path | None = None
        self.kept: list[str] = []
        self.lost: list[str] = []

    def describe(self) -> str:
        where = f"; the damaged file was moved to {self.moved_to}" if self.moved_to else ""
        text = (
            f"{self.database} was damaged ({self.cause}){where}; "
            "the thread index is rebuilt from the thread files"
        )
        if self.kept:
            text += "; kept " + ", ".join(self.kept)
        if self.lost:
            text += "; LOST " + ", ".join(self.lost)
        return text


def is_damage(exc: BaseException) -> bool:
    """An error that means the file itself is damaged (not busy, locked or read-only)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    if isinstance(exc, sqlite3.OperationalError):
        text = str(exc).lower()
        return any(word in text for word in _DAMAGE_WORDS) and "locked" not in text
    return not isinstance(exc, sqlite3.IntegrityError | sqlite3.ProgrammingError)


def quick_check(conn: sqlite3.Connection) -> str:
    """'ok', or what SQLite's quick_check (or the attempt to run it) found."""
    try:
        rows = conn.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError as exc:
        return str(exc)
    found = [str(r[0]) for r in rows]
    return "ok" if found == ["ok"] else "; ".join(found[:3])


def rebuild_database(database: Path, cause: str) -> RebuildReport:
    """Move the damaged file aside and start a new one holding what could be read of
    every table that is not the thread index (the caller re-indexes the files)."""
    report = RebuildReport(database, cause)
    report.moved_to = _move_aside(database)
    if report.moved_to is None:
        # Cannot move it (read-only folder?): nothing is changed; callers fall back
        # to an in-memory index.
        report.lost.append("nothing (the damaged file could not be moved aside)")
        return report
    from loom.store.db import connect, save_schema_copy

    new = connect(database)
    try:
        _salvage(report.moved_to, new, report)
        save_schema_copy(new)
    finally:
        new.close()
    return report


def _move_aside(database: Path) -> Path | None:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    target = database.with_name(f"{database.name}.damaged-{stamp}")
    counter = 1
    while target.exists():
        counter += 1
        target = database.with_name(f"{database.name}.damaged-{stamp}.{counter}")
    try:
        os.rename(database, target)
    except FileNotFoundError:
        return target if target.exists() else None
    except OSError:
        return None
    # The WAL holds committed pages not yet in the main file: it moves along, under
    # the name SQLite looks for next to the moved file.
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(OSError):
            os.rename(f"{database}{suffix}", f"{target}{suffix}")
    return target


def _restore_schema_entries(old_path: Path) -> dict[str, str]:
    """Put back the CREATE statements saved at the last migration (a flipped byte in
    one makes SQLite refuse the whole schema); returns {table: sql} as saved."""
    import json

    from loom.store.db import schema_copy_path

    try:
        saved = json.loads(Path(schema_copy_path(str(old_path.with_name("loom.db")))).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(saved, dict):
        return {}
    good = {
        name: (sql, page)
        for name, entry in saved.items()
        if isinstance(entry, list) and len(entry) == 2
        for sql, page in [entry]
        if isinstance(sql, str) and isinstance(page, int) and _ours(name)
    }
    with contextlib.suppress(sqlite3.Error):
        conn = sqlite3.connect(old_path, isolation_level=None)
        try:
            conn.execute("PRAGMA writable_schema = ON")
            for name, (sql, page) in good.items():
                conn.execute(
                    "UPDATE sqlite_master SET name = ?, tbl_name = ?, sql = ? "
                    "WHERE type = 'table' AND rootpage = ?",
                    (name, name, sql, page),
                )
        finally:
            conn.close()
    return {name: sql for name, (sql, _) in good.items()}


def _salvage(old_path: Path, new: sqlite3.Connection, report: RebuildReport) -> None:
    saved = _restore_schema_entries(old_path)
    try:
        old = sqlite3.connect(old_path, isolation_level=None)
        old.text_factory = lambda raw: raw.decode("utf-8", "replace")
        # Read the schema even where part of it no longer parses (a flipped byte in
        # the thread index's CREATE statement must not cost the grants table).
        old.execute("PRAGMA writable_schema = ON")
        old.execute("PRAGMA query_only = 1")
        schema = [
            row
            for row in old.execute(
                "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL"
            ).fetchall()
            if all(isinstance(value, str) for value in row)  # a flipped type byte: a blob
        ]
    except sqlite3.DatabaseError as exc:
        report.lost.append(f"everything besides the thread index (the schema is unreadable: {exc})")
        return
    try:
        tables = [
            (n, saved.get(n, sql))
            for kind, n, _, sql in schema
            if kind == "table"
            and _ours(n)
            and INDEX_PREFIX not in sql
            # with a saved schema, only tables it knows: a garbled name is not a table
            and (not saved or n in saved)
        ]
        for name, sql in tables:
            if sql is None:  # no saved statement and none readable: nothing to copy
                continue
            try:
                _copy_table(old, new, name, sql, report)
            except sqlite3.Error as exc:
                report.lost.append(f"{name} ({exc})")
        for kind, _name, table, sql in schema:
            if kind == "index" and _ours(table):
                with contextlib.suppress(sqlite3.Error):
                    new.execute(sql)
        _copy_migration_marks(old, new, {t for t, _ in tables}, report)
    finally:
        old.close()


def _ours(table: str) -> bool:
    """Tables to carry over: everything but the thread index and SQLite's own."""
    return not table.startswith((INDEX_PREFIX, "sqlite_", "_migrations"))


def _copy_table(
    old: sqlite3.Connection, new: sqlite3.Connection, name: str, sql: str, report: RebuildReport
) -> None:
    new.execute(sql)
    quoted = '"' + name.replace('"', '""') + '"'
    rows: list[tuple] = []
    error: str | None = None
    try:
        for row in old.execute(f"SELECT * FROM {quoted}"):
            rows.append(tuple(row))
    except sqlite3.DatabaseError as exc:
        error = str(exc)
    if error is not None:
        # A damaged page ends the scan; read on from the other end by rowid.
        with contextlib.suppress(sqlite3.DatabaseError):
            tail = old.execute(f"SELECT * FROM {quoted} ORDER BY rowid DESC").fetchmany(100_000)
            seen = set(rows)
            rows += [tuple(r) for r in tail if tuple(r) not in seen]
    if rows:
        marks = ",".join("?" * len(rows[0]))
        new.execute("BEGIN")
        new.executemany(f"INSERT OR IGNORE INTO {quoted} VALUES ({marks})", rows)
        new.execute("COMMIT")
    if error is None:
        report.kept.append(f"{name} ({len(rows)} rows)")
    else:
        report.lost.append(f"part of {name} ({len(rows)} rows read before: {error})")


def _copy_migration_marks(
    old: sqlite3.Connection, new: sqlite3.Connection, tables: set[str], report: RebuildReport
) -> None:
    """Components whose tables were carried over keep their schema version, so their
    migrations do not run again on tables that exist."""
    new.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (component TEXT PRIMARY KEY, version INTEGER)"
    )
    try:
        marks = old.execute("SELECT component, version FROM _migrations").fetchall()
    except sqlite3.DatabaseError as exc:
        if tables:
            report.lost.append(f"the schema versions ({exc}); tables were kept as found")
        return
    new.executemany(
        "INSERT OR REPLACE INTO _migrations (component, version) VALUES (?, ?)",
        [(c, v) for c, v in marks if c != "thread_index"],
    )
