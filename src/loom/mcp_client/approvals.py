"""Which project-defined MCP servers the person approved, in `loom.db` (table
`mcp_approvals`): one row per project, server name and definition fingerprint."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from loom.core.clock import now_iso
from loom.mcp_client.specs import ServerSpec
from loom.store.db import connect, migrate


def _create_table(conn: sqlite3.Connection) -> None:
    conn.execute(
        """CREATE TABLE mcp_approvals (
            project_root TEXT NOT NULL,
            name TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            approved_at TEXT NOT NULL,
            PRIMARY KEY (project_root, name)
        )"""
    )


MIGRATIONS = [_create_table]


class ApprovalStore:
    def __init__(self, database: Path, project_root: Path) -> None:
        self.database = database
        self.project_root = str(Path(project_root).resolve())

    def _conn(self) -> sqlite3.Connection:
        conn = connect(self.database)
        migrate(conn, "mcp_approvals", MIGRATIONS)
        return conn

    def is_approved(self, spec: ServerSpec) -> bool:
        if not spec.needs_approval:
            return True
        try:
            conn = self._conn()
        except sqlite3.Error:
            return False  # an unreadable database approves nothing
        try:
            row = conn.execute(
                "SELECT fingerprint FROM mcp_approvals WHERE project_root = ? AND name = ?",
                (self.project_root, spec.name),
            ).fetchone()
        finally:
            conn.close()
        return row is not None and row["fingerprint"] == spec.fingerprint()

    def approve(self, spec: ServerSpec) -> None:
        conn = self._conn()
        try:
            conn.execute(
                "INSERT INTO mcp_approvals (project_root, name, fingerprint, approved_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT(project_root, name) DO UPDATE SET "
                "fingerprint = excluded.fingerprint, approved_at = excluded.approved_at",
                (self.project_root, spec.name, spec.fingerprint(), now_iso()),
            )
        finally:
            conn.close()

    def revoke(self, name: str) -> bool:
        conn = self._conn()
        try:
            cursor = conn.execute(
                "DELETE FROM mcp_approvals WHERE project_root = ? AND name = ?",
                (self.project_root, name),
            )
        finally:
            conn.close()
        return cursor.rowcount > 0
