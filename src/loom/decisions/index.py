"""The project-wide decision graph index in `loom.db`, rebuilt from the thread files.

Each thread file holds the nodes, edges and node changes its session logged (the files
are the truth, sync carries them). This index joins them for every thread on the
machine so a query (active goals, recent decisions, pulse, search) is a few SQL
statements instead of reading files. Rows carry the thread's `workspace_root`, so a
project sees its own graph.

Changes to a node (from its own thread or another) are applied in time order into the
node's effective `status` and `confidence`; `base_*` keep what the node was logged with.

Freshness works like the thread index: one `stat` of the threads folder decides whether
anything changed; if it did, each file's (size, mtime) is compared with what was indexed
and only changed files are read.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loom.core.decisions import DecisionLog
from loom.store.db import connect, migrate, thread_connection

COMPONENT = "decision_index"


def _m1_tables(conn: sqlite3.Connection) -> None:
    conn.execute(
        """CREATE TABLE decision_threads (
            thread_id TEXT PRIMARY KEY, workspace_root TEXT,
            file_size INTEGER, file_mtime_ns INTEGER)"""
    )
    conn.execute(
        """CREATE TABLE decision_nodes (
            num INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE, thread_id TEXT NOT NULL, workspace_root TEXT,
            node_type TEXT NOT NULL, title TEXT NOT NULL, description TEXT NOT NULL,
            base_status TEXT NOT NULL, base_confidence INTEGER NOT NULL,
            status TEXT NOT NULL, confidence INTEGER NOT NULL,
            metadata TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)"""
    )
    conn.execute("CREATE INDEX decision_nodes_thread ON decision_nodes (thread_id)")
    conn.execute(
        "CREATE INDEX decision_nodes_scope ON decision_nodes "
        "(workspace_root, node_type, status, updated_at)"
    )
    conn.execute(
        """CREATE TABLE decision_edges (
            change_id TEXT PRIMARY KEY, thread_id TEXT NOT NULL,
            from_id TEXT NOT NULL, to_id TEXT NOT NULL, edge_type TEXT NOT NULL,
            weight REAL NOT NULL, rationale TEXT NOT NULL, created_at TEXT NOT NULL)"""
    )
    conn.execute("CREATE INDEX decision_edges_from ON decision_edges (from_id)")
    conn.execute("CREATE INDEX decision_edges_to ON decision_edges (to_id)")
    conn.execute("CREATE INDEX decision_edges_thread ON decision_edges (thread_id)")
    conn.execute(
        """CREATE TABLE decision_changes (
            change_id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, node_id TEXT NOT NULL,
            status TEXT, confidence INTEGER, rationale TEXT NOT NULL, at TEXT NOT NULL)"""
    )
    conn.execute("CREATE INDEX decision_changes_node ON decision_changes (node_id, at)")
    conn.execute("CREATE INDEX decision_changes_thread ON decision_changes (thread_id)")
    conn.execute(
        "CREATE VIRTUAL TABLE decision_fts USING fts5(title, description, "
        "tokenize = 'unicode61 remove_diacritics 2')"
    )
    conn.execute("CREATE TABLE decision_state (key TEXT PRIMARY KEY, value TEXT NOT NULL)")


MIGRATIONS = [_m1_tables]

NODE_COLUMNS = (
    "id, thread_id, workspace_root, node_type, title, description, status, confidence, "
    "metadata, created_at, updated_at"
)


@dataclass(frozen=True)
class NodeRow:
    id: str
    thread_id: str
    workspace_root: str | None
    node_type: str
    title: str
    description: str
    status: str
    confidence: int
    metadata: dict
    created_at: str
    updated_at: str

    @classmethod
    def from_sql(cls, row: sqlite3.Row | tuple) -> NodeRow:
        values = list(row)
        values[8] = json.loads(values[8] or "{}")
        return cls(*values)


@dataclass(frozen=True)
class EdgeRow:
    change_id: str
    thread_id: str
    from_id: str
    to_id: str
    edge_type: str
    weight: float
    rationale: str
    created_at: str


@dataclass
class RefreshReport:
    files_seen: int = 0
    files_read: int = 0
    threads_with_graph: int = 0
    unreadable: int = 0


MAX_ID_PREFIX = 64
"""Longer than any node id: a longer string is not looked up as an id prefix."""


class DecisionIndex:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        # Threads whose nodes and edges reads leave out (`loom mcp serve` hides private
        # threads' decisions from its client); writes are not affected.
        self.hidden_threads: frozenset[str] = frozenset()

    @classmethod
    def open(cls, database: Path | str, *, check_same_thread: bool = True) -> DecisionIndex:
        """`check_same_thread=False` for a caller that serialises access itself."""
        conn = connect(database, check_same_thread=check_same_thread)
        migrate(conn, COMPONENT, MIGRATIONS)
        return cls(conn)

    @classmethod
    def for_this_thread(cls, database: Path) -> DecisionIndex:
        """The index over this thread's shared connection to `database`
        (`loom.store.db.thread_connection`); not to be closed."""
        return cls(thread_connection(database, COMPONENT, MIGRATIONS))

    @classmethod
    def in_memory(cls) -> DecisionIndex:
        conn = sqlite3.connect(":memory:", isolation_level=None)
        migrate(conn, COMPONENT, MIGRATIONS)
        return cls(conn)

    def close(self) -> None:
        self.conn.close()

    # -- writing -----------------------------------------------------------------------

    def put_thread(
        self,
        thread_id: str,
        workspace_root: str | None,
        log: DecisionLog,
        stamp: tuple[int, int] | None = None,
    ) -> None:
        """Replace everything indexed for `thread_id` with `log` (one transaction)."""
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            touched = self._delete_thread(thread_id)
            size, mtime = stamp if stamp is not None else (None, None)
            conn.execute(
                "INSERT INTO decision_threads VALUES (?, ?, ?, ?)",
                (thread_id, workspace_root, size, mtime),
            )
            for node in log.nodes:
                cur = conn.execute(
                    "INSERT OR IGNORE INTO decision_nodes (id, thread_id, workspace_root, "
                    "node_type, title, description, base_status, base_confidence, status, "
                    "confidence, metadata, created_at, updated_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        node.id, node.thread_id or thread_id, workspace_root, node.node_type,
                        node.title, node.description, node.status, node.confidence,
                        node.status, node.confidence, json.dumps(node.metadata),
                        node.created_at, node.created_at,
                    ),
                )  # fmt: skip
                if cur.rowcount:
                    conn.execute(
                        "INSERT INTO decision_fts (rowid, title, description) VALUES (?, ?, ?)",
                        (cur.lastrowid, node.title, node.description),
                    )
            # this thread's nodes that other threads changed (their changes stay indexed)
            touched.update(
                row[0]
                for row in conn.execute(
                    "SELECT DISTINCT c.node_id FROM decision_changes c "
                    "JOIN decision_nodes n ON n.id = c.node_id WHERE n.thread_id = ?",
                    (thread_id,),
                )
            )
            conn.executemany(
                "INSERT OR IGNORE INTO decision_edges VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (e.change_id, thread_id, e.from_id, e.to_id, e.edge_type, e.weight,
                     e.rationale, e.created_at)
                    for e in log.edges
                ],
            )  # fmt: skip
            conn.executemany(
                "INSERT OR IGNORE INTO decision_changes VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (c.change_id, thread_id, c.node_id, c.status, c.confidence, c.rationale,
                     c.at)
                    for c in log.changes
                ],
            )  # fmt: skip
            touched.update(c.node_id for c in log.changes)
            self._apply_changes(touched)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def remove_thread(self, thread_id: str) -> None:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            self._apply_changes(self._delete_thread(thread_id))
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def _delete_thread(self, thread_id: str) -> set[str]:
        """Delete a thread's rows; return the node ids whose effective state may change."""
        conn = self.conn
        touched = {
            row[0]
            for row in conn.execute(
                "SELECT node_id FROM decision_changes WHERE thread_id = ?", (thread_id,)
            )
        }
        conn.execute(
            "DELETE FROM decision_fts WHERE rowid IN "
            "(SELECT num FROM decision_nodes WHERE thread_id = ?)",
            (thread_id,),
        )
        conn.execute("DELETE FROM decision_nodes WHERE thread_id = ?", (thread_id,))
        conn.execute("DELETE FROM decision_edges WHERE thread_id = ?", (thread_id,))
        conn.execute("DELETE FROM decision_changes WHERE thread_id = ?", (thread_id,))
        conn.execute("DELETE FROM decision_threads WHERE thread_id = ?", (thread_id,))
        return touched

    def _apply_changes(self, node_ids: Iterable[str]) -> None:
        """Recompute effective status/confidence/updated_at from base + changes by time."""
        conn = self.conn
        for node_id in node_ids:
            row = conn.execute(
                "SELECT base_status, base_confidence, created_at FROM decision_nodes WHERE id = ?",
                (node_id,),
            ).fetchone()
            if row is None:
                continue
            status, confidence, updated = row[0], row[1], row[2]
            for change in conn.execute(
                "SELECT status, confidence, at FROM decision_changes WHERE node_id = ? "
                "ORDER BY at, change_id",
                (node_id,),
            ):
                status = change[0] or status
                confidence = confidence if change[1] is None else change[1]
                updated = max(updated, change[2])
            conn.execute(
                "UPDATE decision_nodes SET status = ?, confidence = ?, updated_at = ? WHERE id = ?",
                (status, confidence, updated, node_id),
            )

    # -- freshness -----------------------------------------------------------------------

    def refresh(self, threads_dir: Path, *, force: bool = False) -> RefreshReport:
        """Bring the index up to date with the thread files (only changed files are read)."""
        report = RefreshReport()
        try:
            folder_mtime = str(os.stat(threads_dir).st_mtime_ns)
        except FileNotFoundError:
            return report
        known = self._state("folder_mtime")
        if known == folder_mtime and not force:
            return report
        indexed = {
            row[0]: (row[1], row[2])
            for row in self.conn.execute(
                "SELECT thread_id, file_size, file_mtime_ns FROM decision_threads"
            )
        }
        on_disk: dict[str, tuple[int, int]] = {}
        with os.scandir(threads_dir) as entries:
            for entry in entries:
                if entry.name.startswith("T-") and entry.name.endswith(".json"):
                    st = entry.stat()
                    on_disk[entry.name[:-5]] = (st.st_size, st.st_mtime_ns)
        report.files_seen = len(on_disk)
        for thread_id in indexed.keys() - on_disk.keys():
            self.remove_thread(thread_id)
        for thread_id, stamp in on_disk.items():
            if indexed.get(thread_id) == stamp and not force:
                continue
            report.files_read += 1
            loaded = _read_log(threads_dir / f"{thread_id}.json")
            if loaded is None:
                report.unreadable += 1
                continue  # the thread store quarantines and reports it
            workspace_root, log = loaded
            if not log.is_empty():
                report.threads_with_graph += 1
            self.put_thread(thread_id, workspace_root, log, stamp)
        self._set_state("folder_mtime", folder_mtime)
        return report

    def rebuild(self, threads_dir: Path) -> RefreshReport:
        return self.refresh(threads_dir, force=True)

    def _state(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM decision_state WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def _set_state(self, key: str, value: str) -> None:
        self.conn.execute(
            "INSERT INTO decision_state VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    # -- reading ---------------------------------------------------------------------------

    def nodes(
        self,
        *,
        workspace_root: str | None = None,
        types: Iterable[str] = (),
        statuses: Iterable[str] = (),
        thread_id: str | None = None,
        limit: int | None = None,
        newest_first: bool = True,
    ) -> list[NodeRow]:
        where, params = _scope(workspace_root, thread_id)
        self._hide(where, params)
        types, statuses = list(types), list(statuses)
        if types:
            where.append(f"node_type IN ({','.join('?' * len(types))})")
            params.extend(types)
        if statuses:
            where.append(f"status IN ({','.join('?' * len(statuses))})")
            params.extend(statuses)
        sql = f"SELECT {NODE_COLUMNS} FROM decision_nodes"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY updated_at " + ("DESC" if newest_first else "ASC") + ", num"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [NodeRow.from_sql(row) for row in self.conn.execute(sql, params)]

    def node(self, node_id: str) -> NodeRow | None:
        row = self.conn.execute(
            f"SELECT {NODE_COLUMNS} FROM decision_nodes WHERE id = ?", (node_id,)
        ).fetchone()
        if row is None and 0 < len(node_id) <= MAX_ID_PREFIX:  # a unique prefix, as typed
            # (no LIKE: `_` and `%` are wildcards there, and SQLite refuses a pattern over
            # 50,000 bytes, which a title passed as `parent` can be)
            rows = self.conn.execute(
                f"SELECT {NODE_COLUMNS} FROM decision_nodes "
                "WHERE substr(id, 1, length(?1)) = ?1 LIMIT 2",
                (node_id,),
            ).fetchall()
            row = rows[0] if len(rows) == 1 else None
        node = NodeRow.from_sql(row) if row is not None else None
        return None if node is None or node.thread_id in self.hidden_threads else node

    def node_titled(self, title: str, *, workspace_root: str | None = None) -> NodeRow | None:
        """The newest node whose title is exactly `title` (case-insensitive)."""
        where, params = _scope(workspace_root, None)
        self._hide(where, params)
        where.append("lower(title) = lower(?)")
        params.append(title.strip())
        row = self.conn.execute(
            f"SELECT {NODE_COLUMNS} FROM decision_nodes WHERE {' AND '.join(where)} "
            "ORDER BY updated_at DESC LIMIT 1",
            params,
        ).fetchone()
        return NodeRow.from_sql(row) if row is not None else None

    def edges(
        self, *, node_ids: Iterable[str] | None = None, workspace_root: str | None = None
    ) -> list[EdgeRow]:
        sql = "SELECT e.* FROM decision_edges e"
        params: list[object] = []
        if node_ids is not None:
            ids = list(node_ids)
            marks = ",".join("?" * len(ids))
            sql += f" WHERE e.from_id IN ({marks}) OR e.to_id IN ({marks})"
            params = [*ids, *ids]
        elif workspace_root is not None:
            sql += " WHERE e.from_id IN (SELECT id FROM decision_nodes WHERE workspace_root = ?)"
            params = [workspace_root]
        edges = [EdgeRow(*row) for row in self.conn.execute(sql + " ORDER BY created_at", params)]
        if not self.hidden_threads:
            return edges
        hidden_nodes = self._hidden_node_ids()
        return [
            e
            for e in edges
            if e.thread_id not in self.hidden_threads
            and e.from_id not in hidden_nodes
            and e.to_id not in hidden_nodes
        ]

    def search(
        self, query: str, *, workspace_root: str | None = None, limit: int = 20
    ) -> list[NodeRow]:
        from loom.store.search_text import fts_query

        match = fts_query(query)
        if not match:
            return []
        where, params = _scope(workspace_root, None, prefix="n.")
        self._hide(where, params, prefix="n.")
        sql = (
            f"SELECT {', '.join('n.' + c.strip() for c in NODE_COLUMNS.split(','))} "
            "FROM decision_fts JOIN decision_nodes n ON n.num = decision_fts.rowid "
            "WHERE decision_fts MATCH ?"
        )
        if where:
            sql += " AND " + " AND ".join(where)
        sql += f" ORDER BY rank LIMIT {int(limit)}"
        return [NodeRow.from_sql(row) for row in self.conn.execute(sql, [match, *params])]

    def count(self, workspace_root: str | None = None) -> int:
        where, params = _scope(workspace_root, None)
        self._hide(where, params)
        sql = "SELECT count(*) FROM decision_nodes"
        if where:
            sql += " WHERE " + " AND ".join(where)
        return int(self.conn.execute(sql, params).fetchone()[0])

    def _hide(self, where: list[str], params: list[object], prefix: str = "") -> None:
        """Leave out the hidden threads' rows (one condition, the ids as parameters)."""
        if self.hidden_threads:
            marks = ",".join("?" * len(self.hidden_threads))
            where.append(f"{prefix}thread_id NOT IN ({marks})")
            params.extend(sorted(self.hidden_threads))

    def _hidden_node_ids(self) -> set[str]:
        marks = ",".join("?" * len(self.hidden_threads))
        rows = self.conn.execute(
            f"SELECT id FROM decision_nodes WHERE thread_id IN ({marks})",
            sorted(self.hidden_threads),
        )
        return {row[0] for row in rows}


def _scope(
    workspace_root: str | None, thread_id: str | None, prefix: str = ""
) -> tuple[list[str], list[object]]:
    where: list[str] = []
    params: list[object] = []
    if workspace_root is not None:
        where.append(f"{prefix}workspace_root = ?")
        params.append(workspace_root)
    if thread_id is not None:
        where.append(f"{prefix}thread_id = ?")
        params.append(thread_id)
    return where, params


def _read_log(path: Path) -> tuple[str | None, DecisionLog] | None:
    """(workspace_root, log) of one thread file, or None when it cannot be read."""
    import orjson

    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b'"node_type"' not in data and b'"node_id"' not in data:
        # no node and no change in this file: skip parsing it whole
        return _workspace_root(data), DecisionLog()
    try:
        document = orjson.loads(data)
        log = DecisionLog.model_validate(document.get("decision_graph") or {})
    except Exception:  # a bad file: the thread store quarantines and reports it
        return None
    root = document.get("workspace_root")
    return graph_scope(root if isinstance(root, str) else None, document.get("worktree")), log


def graph_scope(workspace_root: str | None, worktree: Any) -> str | None:
    """The project a thread's decisions belong to: for a thread that worked in a git
    worktree (`loom --worktree`, a sub-agent's `isolation: worktree`), the repository
    the worktree belongs to, since its folder lies elsewhere; else where it worked."""
    if isinstance(worktree, dict):
        repo = worktree.get("repo")
        if isinstance(repo, str) and repo:
            return repo
    return workspace_root


def _workspace_root(data: bytes) -> str | None:
    """The workspace_root of a thread file without parsing it whole (it sits near the top)."""
    import orjson

    start = data.find(b'"workspace_root":')
    if start < 0:
        return None
    end = data.find(b"\n", start)
    piece = data[start + len(b'"workspace_root":') : end].strip().rstrip(b",")
    try:
        value = orjson.loads(piece)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, str) else None
