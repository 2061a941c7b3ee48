"""The thread index in `loom.db`: summary rows for listing plus an FTS5 search index.

Standard library only (the `loom list` / `loom search` fast path imports it).

Layout: `thread_index_threads` has one row per thread (what `loom list` shows, plus
the file's inode/size/mtime so drift is detected). `thread_index_fts` has a header row
per thread (title; tags, branch, remote, workspace, commit SHAs and id) and one row per
message (its text). FTS rowids are `num << 20 | (message_index + 1)` (header: `+ 0`),
so a thread's rows are one rowid range, deleted or replaced without a lookup table.
The JSON files stay the truth; everything here can be rebuilt from them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from datetime import UTC, datetime

from loom.store.base import SearchHit, ThreadSummary
from loom.store.summary import IndexRecord

COMPONENT = "thread_index"
THREADS = "thread_index_threads"
FTS = "thread_index_fts"
STATE = "thread_index_state"
ROW_BITS = 20
MAX_MESSAGES_INDEXED = (1 << ROW_BITS) - 2
HIGHLIGHT = ("**", "**")
_SUMMARY_COLS = (
    "id, title, version, last_activity_at, message_count, git_branch, git_remote_url, "
    "workspace_root, agent_state_kind, is_private, visibility"
)


def _m1_tables(conn: sqlite3.Connection) -> None:
    conn.execute(
        f"""CREATE TABLE {THREADS} (
            num INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            title TEXT NOT NULL,
            version INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            last_activity_at TEXT NOT NULL,
            message_count INTEGER NOT NULL,
            git_branch TEXT,
            git_remote_url TEXT,
            workspace_root TEXT,
            agent_state_kind TEXT,
            is_private INTEGER NOT NULL DEFAULT 0,
            visibility TEXT NOT NULL DEFAULT 'organization',
            indexed_messages INTEGER NOT NULL DEFAULT 0,
            file_ino INTEGER, file_size INTEGER, file_mtime_ns INTEGER
        )"""
    )
    conn.execute(f"CREATE INDEX {THREADS}_activity ON {THREADS} (last_activity_at DESC)")
    conn.execute(
        f"CREATE VIRTUAL TABLE {FTS} USING fts5(title, meta, body, "
        "tokenize = 'unicode61 remove_diacritics 2')"
    )
    # Title and header matches outrank a word somewhere in a long conversation.
    conn.execute(f"INSERT INTO {FTS} ({FTS}, rank) VALUES ('rank', 'bm25(10.0, 4.0, 1.0)')")
    conn.execute(f"CREATE TABLE {STATE} (key TEXT PRIMARY KEY, value TEXT NOT NULL)")


MIGRATIONS = [_m1_tables]


def sortable_time(text: str) -> str:
    """Timestamps in our own format sort as text; normalise any other ISO 8601 form."""
    if len(text) == 24 and text.endswith("Z") and text[10] == "T":
        return text
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return text
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def fts_query(text: str) -> str | None:
    """A user's words as an FTS5 query: each word a quoted phrase matched as a prefix.

    Prefix matching finds commit SHAs by their first characters and `auth` in
    `authentication`, close to seed 002's substring search. Punctuation inside a word
    (`feature/auth`, `github.com/ana/proj`) makes it a phrase of its parts.
    """
    parts = []
    for word in text.split():
        if not any(ch.isalnum() for ch in word):
            continue
        parts.append('"' + word.replace('"', '""') + '"*')
    return " ".join(parts) or None


class ThreadIndex:
    """Queries and updates over one connection; `loom.store.index_sync` keeps it fresh."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    # -- state ---------------------------------------------------------------------

    def get_state(self, key: str) -> str | None:
        row = self.conn.execute(f"SELECT value FROM {STATE} WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_state(self, key: str, value: str) -> None:
        self.conn.execute(
            f"INSERT INTO {STATE} (key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    # -- writes (callers wrap them in a transaction) -----------------------------------

    def indexed_message_count(self, thread_id: str) -> int | None:
        row = self.conn.execute(
            f"SELECT indexed_messages FROM {THREADS} WHERE id = ?", (thread_id,)
        ).fetchone()
        return row[0] if row else None

    def upsert(self, rec: IndexRecord, file_stat: tuple[int, int, int] | None) -> None:
        """Write `rec`; its message_texts replace messages from `rec.first_message` on."""
        ino, size, mtime = file_stat or (None, None, None)
        num = self.conn.execute(
            f"""INSERT INTO {THREADS} (id, title, version, created_at, last_activity_at,
                message_count, git_branch, git_remote_url, workspace_root, agent_state_kind,
                is_private, visibility, indexed_messages, file_ino, file_size, file_mtime_ns)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET title = excluded.title,
                version = excluded.version, created_at = excluded.created_at,
                last_activity_at = excluded.last_activity_at,
                message_count = excluded.message_count, git_branch = excluded.git_branch,
                git_remote_url = excluded.git_remote_url,
                workspace_root = excluded.workspace_root,
                agent_state_kind = excluded.agent_state_kind,
                is_private = excluded.is_private, visibility = excluded.visibility,
                indexed_messages = excluded.indexed_messages, file_ino = excluded.file_ino,
                file_size = excluded.file_size, file_mtime_ns = excluded.file_mtime_ns
            RETURNING num""",
            (
                rec.id,
                rec.title,
                rec.version,
                rec.created_at,
                sortable_time(rec.last_activity_at),
                rec.message_count,
                rec.git_branch,
                rec.git_remote_url,
                rec.workspace_root,
                rec.agent_state_kind,
                int(rec.is_private),
                rec.visibility,
                rec.message_count,
                ino,
                size,
                mtime,
            ),
        ).fetchone()[0]
        base = num << ROW_BITS
        first = rec.first_message
        # Header row always; message rows from `first` on (append-only history).
        self.conn.execute(f"DELETE FROM {FTS} WHERE rowid = ?", (base,))
        self.conn.execute(
            f"DELETE FROM {FTS} WHERE rowid BETWEEN ? AND ?",
            (base + first + 1, base + (1 << ROW_BITS) - 1),
        )
        rows: Iterable[tuple[int, str, str, str]] = (
            (base + first + i + 1, "", "", text)
            for i, text in enumerate(rec.message_texts[: MAX_MESSAGES_INDEXED - first])
            if text
        )
        self.conn.execute(
            f"INSERT INTO {FTS} (rowid, title, meta, body) VALUES (?, ?, ?, '')",
            (base, rec.title, rec.meta_text),
        )
        self.conn.executemany(
            f"INSERT INTO {FTS} (rowid, title, meta, body) VALUES (?, ?, ?, ?)", rows
        )

    def remove(self, thread_id: str) -> None:
        row = self.conn.execute(
            f"DELETE FROM {THREADS} WHERE id = ? RETURNING num", (thread_id,)
        ).fetchone()
        if row:
            base = row[0] << ROW_BITS
            self.conn.execute(
                f"DELETE FROM {FTS} WHERE rowid BETWEEN ? AND ?",
                (base, base + (1 << ROW_BITS) - 1),
            )

    def clear(self) -> None:
        self.conn.execute(f"DELETE FROM {THREADS}")
        self.conn.execute(f"DELETE FROM {FTS}")
        self.conn.execute(f"DELETE FROM {STATE}")

    # -- reads ---------------------------------------------------------------------

    def file_stats(self) -> dict[str, tuple[int | None, int | None, int | None]]:
        rows = self.conn.execute(f"SELECT id, file_ino, file_size, file_mtime_ns FROM {THREADS}")
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    def count(self) -> int:
        return int(self.conn.execute(f"SELECT count(*) FROM {THREADS}").fetchone()[0])

    def list(self, limit: int = 50) -> list[ThreadSummary]:
        rows = self.conn.execute(
            f"SELECT {_SUMMARY_COLS} FROM {THREADS} "
            "ORDER BY last_activity_at DESC, id DESC LIMIT ?",
            (max(limit, 0),),
        ).fetchall()
        return [_summary(r) for r in rows]

    def resolve(self, prefix: str, limit: int = 10) -> list[str]:
        """Ids starting with `prefix` (the `T-` may be left out), at most `limit`."""
        prefix = prefix.strip().lower()
        if not prefix.startswith("t-"):
            prefix = "T-" + prefix
        prefix = "T-" + prefix[2:]
        rows = self.conn.execute(
            f"SELECT id FROM {THREADS} WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
            (prefix, prefix + "\U0010ffff", limit),
        )
        return [r[0] for r in rows]

    def search(self, query: str, limit: int = 20) -> list[SearchHit]:
        match = fts_query(query)
        if match is None or limit <= 0:
            return []
        best: dict[int, tuple[int, float]] = {}  # thread num -> (fts rowid, rank)
        window = max(limit * 25, 500)
        while True:
            rows = self.conn.execute(
                f"SELECT rowid, rank FROM {FTS} WHERE {FTS} MATCH ? ORDER BY rank LIMIT ?",
                (match, window),
            ).fetchall()
            for rowid, rank in rows:
                best.setdefault(rowid >> ROW_BITS, (rowid, rank))
            if len(best) >= limit or len(rows) < window:
                break
            window *= 8  # many hits in few threads: look further down the ranking
        chosen = sorted(best.items(), key=lambda item: item[1][1])[:limit]
        hits = []
        for num, (rowid, rank) in chosen:
            summary = self.conn.execute(
                f"SELECT {_SUMMARY_COLS} FROM {THREADS} WHERE num = ?", (num,)
            ).fetchone()
            if summary is None:
                continue
            snippet = self.conn.execute(
                f"SELECT snippet({FTS}, -1, ?, ?, '…', 12) FROM {FTS} "
                f"WHERE {FTS} MATCH ? AND rowid = ?",
                (*HIGHLIGHT, match, rowid),
            ).fetchone()
            hits.append(
                SearchHit(_summary(summary), _one_line(snippet[0] if snippet else ""), rank)
            )
        return hits


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _summary(row: sqlite3.Row | tuple) -> ThreadSummary:
    return ThreadSummary(
        id=row[0],
        title=row[1],
        version=row[2],
        last_activity_at=row[3],
        message_count=row[4],
        git_branch=row[5],
        git_remote_url=row[6],
        workspace_root=row[7],
        agent_state_kind=row[8],
        is_private=bool(row[9]),
        visibility=row[10],
    )
