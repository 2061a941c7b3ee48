"""Saved `allow_always` grants, in the local database (`loom.db`, table permission_grants).

A grant belongs to one project root and one tool, and covers a scope:

| kind     | scope              | covers                                               |
| path     | `src/app.py`       | exactly that file                                    |
| dir      | `src/`             | every path under that folder                         |
| prefix   | `git status`       | shell commands starting with those words (see shell_rules) |
| exact    | `git commit`       | exactly that subject (compound shell commands, git subcommands) |
| any      | `*`                | every call of the tool                               |
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from loom.core.clock import now_iso
from loom.paths import LoomPaths
from loom.store.db import drop_thread_connection, thread_connection

ScopeKind = Literal["path", "dir", "prefix", "exact", "any"]
SCOPE_KINDS: tuple[str, ...] = ("path", "dir", "prefix", "exact", "any")


@dataclass(frozen=True)
class Grant:
    id: int
    project_root: str
    tool: str
    scope_kind: ScopeKind
    scope: str
    created_at: str

    def describe(self) -> str:
        if self.scope_kind == "any":
            return "any call"
        if self.scope_kind == "prefix":
            return f"commands starting with `{self.scope}`"
        if self.scope_kind == "dir":
            return f"paths under {self.scope}"
        return self.scope


def _create_table(conn: sqlite3.Connection) -> None:
    conn.execute(
        """CREATE TABLE permission_grants (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            project_root TEXT NOT NULL,
            tool TEXT NOT NULL,
            scope_kind TEXT NOT NULL,
            scope TEXT NOT NULL,
            created_at TEXT NOT NULL,
            UNIQUE (project_root, tool, scope_kind, scope)
        )"""
    )
    conn.execute("CREATE INDEX permission_grants_lookup ON permission_grants (project_root, tool)")


MIGRATIONS = [_create_table]


def normalize_root(root: Path | str) -> str:
    return str(Path(root).expanduser().resolve())


class GrantStore:
    """Grants for one project (`project_root`), or for all projects when it is None
    (what `loom permissions list` uses). Every query reads the latest committed state,
    so revocations by other processes (`loom permissions revoke`) apply at once."""

    def __init__(self, project_root: Path | str | None = None, *, database: Path | None = None):
        self.project_root = normalize_root(project_root) if project_root is not None else None
        self.database = database or LoomPaths.from_env().database

    @contextmanager
    def _conn(self) -> Iterator[sqlite3.Connection]:
        """This thread's connection to loom.db, shared with every other GrantStore (a
        session has one: it owns no database handle of its own)."""
        try:
            conn = thread_connection(self.database, "permission_grants", MIGRATIONS)
        except sqlite3.DatabaseError:
            drop_thread_connection(self.database)
            raise
        try:
            yield conn
        except sqlite3.DatabaseError:
            self.close()  # a broken connection is not reused
            raise

    def close(self) -> None:
        """Close this thread's connection to the database (the next query opens another)."""
        drop_thread_connection(self.database)

    def _require_project(self) -> str:
        if self.project_root is None:
            raise ValueError("this GrantStore is not bound to a project; pass project_root")
        return self.project_root

    def add(self, tool: str, scope_kind: ScopeKind, scope: str) -> Grant:
        """Save a grant (or return the identical one already saved)."""
        if scope_kind not in SCOPE_KINDS:
            raise ValueError(f"unknown scope kind {scope_kind!r}; use one of {SCOPE_KINDS}")
        root = self._require_project()
        with self._conn() as conn:
            conn.execute(
                "INSERT INTO permission_grants (project_root, tool, scope_kind, scope, created_at)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (root, tool, scope_kind, scope, now_iso()),
            )
            row = conn.execute(
                "SELECT * FROM permission_grants WHERE project_root = ? AND tool = ? "
                "AND scope_kind = ? AND scope = ?",
                (root, tool, scope_kind, scope),
            ).fetchone()
        return _grant(row)

    def for_tool(self, tool: str) -> list[Grant]:
        """This project's grants for `tool`."""
        root = self._require_project()
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT * FROM permission_grants WHERE project_root = ? AND tool = ? ORDER BY id",
                (root, tool),
            ).fetchall()
        return [_grant(row) for row in rows]

    def list(self, *, all_projects: bool = False) -> list[Grant]:
        """Saved grants: this project's, or every project's when unbound or `all_projects`."""
        with self._conn() as conn:
            if self.project_root is None or all_projects:
                rows = conn.execute("SELECT * FROM permission_grants ORDER BY id").fetchall()
            else:
                rows = conn.execute(
                    "SELECT * FROM permission_grants WHERE project_root = ? ORDER BY id",
                    (self.project_root,),
                ).fetchall()
        return [_grant(row) for row in rows]

    def get(self, grant_id: int) -> Grant | None:
        with self._conn() as conn:
            row = conn.execute(
                "SELECT * FROM permission_grants WHERE id = ?", (grant_id,)
            ).fetchone()
        return _grant(row) if row else None

    def revoke(self, grant_id: int) -> bool:
        """Delete one grant by id; False when there is no such grant."""
        with self._conn() as conn:
            cursor = conn.execute("DELETE FROM permission_grants WHERE id = ?", (grant_id,))
        return cursor.rowcount > 0

    def revoke_all(self, *, all_projects: bool = False) -> int:
        """Delete this project's grants (every project's when unbound); return how many."""
        with self._conn() as conn:
            if self.project_root is None or all_projects:
                cursor = conn.execute("DELETE FROM permission_grants")
            else:
                cursor = conn.execute(
                    "DELETE FROM permission_grants WHERE project_root = ?", (self.project_root,)
                )
        return cursor.rowcount


def _grant(row: sqlite3.Row) -> Grant:
    return Grant(
        id=row["id"],
        project_root=row["project_root"],
        tool=row["tool"],
        scope_kind=row["scope_kind"],
        scope=row["scope"],
        created_at=row["created_at"],
    )
