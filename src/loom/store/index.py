"""The thread index in `loom.db`: summary rows for listing plus an FTS5 search index.

Standard library only (the `loom list` / `loom search` fast path imports it).

Layout: `thread_index_threads` has one row per thread (what `loom list` shows, plus
the file's inode/size/mtime so drift is detected). `thread_index_heads` (FTS5) has one
row per thread, rowid = the thread's `num`: its title, and a "meta" column with tags,
branch, remote, workspace, commit SHAs and id. `thread_index_messages` (FTS5) has one
row per message, rowid = `num << 20 | (message index + 1)`, so a thread's messages are
one rowid range, deleted or replaced without a lookup table. The JSON files stay the
truth; everything here can be rebuilt from them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from loom.store.search_text import (
    HIGHLIGHT,
    fts_query,
    make_snippet,
    sortable_time,
    word_parts,
)

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing costs start-up time
if TYPE_CHECKING:
    from typing import Any

    from loom.store.summary import IndexRecord

COMPONENT = "thread_index"
THREADS = "thread_index_threads"
HEADS = "thread_index_heads"
MESSAGES = "thread_index_messages"
STATE = "thread_index_state"
WRITES = "thread_index_writes"
ROW_BITS = 20
MAX_MESSAGES_INDEXED = (1 << ROW_BITS) - 2
RANK_WINDOW = 300
TAIL_LENGTH = 12  # an id's last group: random (its first groups are the creation time)
MIN_TAIL = 4  # fewer characters of a tail would match too many threads to be useful
_HEX_DIGITS = "0123456789abcdef"
"""Most matching rows ranked per search (see ThreadIndex.search)."""
SUMMARY_FIELDS = (
    "id",
    "title",
    "version",
    "last_activity_at",
    "message_count",
    "git_branch",
    "git_remote_url",
    "workspace_root",
    "agent_state_kind",
    "is_private",
    "visibility",
    "parent_thread_id",
)
_SUMMARY_COLS = ", ".join(SUMMARY_FIELDS)
_WRITTEN_FIELDS = (
    "id",
    "title",
    "version",
    "created_at",
    "last_activity_at",
    "message_count",
    "git_branch",
    "git_remote_url",
    "workspace_root",
    "agent_state_kind",
    "is_private",
    "visibility",
    "indexed_messages",
    "file_ino",
    "file_size",
    "file_mtime_ns",
    "parent_thread_id",
)
_WRITTEN_COLS = ", ".join(_WRITTEN_FIELDS)
_WRITTEN_MARKS = ", ".join("?" * len(_WRITTEN_FIELDS))
_UPDATED_COLS = ", ".join(f"{name} = excluded.{name}" for name in _WRITTEN_FIELDS[1:])


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
        "CREATE VIRTUAL TABLE thread_index_fts USING fts5(title, meta, body, "
        "tokenize = 'unicode61 remove_diacritics 2')"
    )
    conn.execute(f"CREATE TABLE {STATE} (key TEXT PRIMARY KEY, value TEXT NOT NULL)")


def _m2_heads_and_messages_apart(conn: sqlite3.Connection) -> None:
    """Headers get their own FTS table, so a title/branch/tag match is ranked among
    headers only (cheap, and above mere mentions). Rebuilds: rows are dropped and the
    next freshness check re-reads every file."""
    conn.execute("DROP TABLE thread_index_fts")
    tokenizer = "tokenize = 'unicode61 remove_diacritics 2'"
    conn.execute(f"CREATE VIRTUAL TABLE {HEADS} USING fts5(title, meta, {tokenizer})")
    conn.execute(f"INSERT INTO {HEADS} ({HEADS}, rank) VALUES ('rank', 'bm25(3.0, 1.0)')")
    conn.execute(f"CREATE VIRTUAL TABLE {MESSAGES} USING fts5(body, {tokenizer})")
    conn.execute(f"DELETE FROM {THREADS}")
    conn.execute(f"DELETE FROM {STATE}")


def _m3_writes_in_progress(conn: sqlite3.Connection) -> None:
    """Saves announce themselves before their rename (see loom.store.index_sync)."""
    conn.execute(
        f"""CREATE TABLE {WRITES} (
            id INTEGER PRIMARY KEY,
            thread_id TEXT NOT NULL,
            pid INTEGER NOT NULL,
            host TEXT NOT NULL,
            started_ns INTEGER NOT NULL
        )"""
    )


def _m4_parent_link(conn: sqlite3.Connection) -> None:
    """A sub-agent's thread names its parent (`loom list --tree`)."""
    conn.execute(f"ALTER TABLE {THREADS} ADD COLUMN parent_thread_id TEXT")
    conn.execute(f"CREATE INDEX {THREADS}_parent ON {THREADS} (parent_thread_id)")


MIGRATIONS = [_m1_tables, _m2_heads_and_messages_apart, _m3_writes_in_progress,
              _m4_parent_link]  # fmt: skip


MARKER_KEY = "threads_dir_marker"
LAST_SCAN_KEY = "last_full_scan_ns"
MESSAGES_PENDING_KEY = "message_rows_pending"
"""Set by a big first index, which writes summaries and headers only; the message
rows follow before the next search (loom.store.index_messages)."""
CHAIN_FOR_NS = 60_000_000_000
"""Saves keep the marker fresh for at most this long after the last full scan."""
STALE_WRITE_NS = 60_000_000_000


def dir_marker(threads_dir: object) -> tuple[str, int]:
    """The threads folder's identity + mtime as marker text, and the mtime in ns.

    See loom.store.index_sync for why this one stat tells whether the index is fresh.
    """
    import os

    try:
        st = os.stat(threads_dir)  # type: ignore[arg-type]
    except FileNotFoundError:
        return "missing", 0
    return f"{st.st_dev}:{st.st_ino}:{st.st_mtime_ns}", st.st_mtime_ns


class ThreadIndex:
    """Queries and updates over one connection; `loom.store.index_sync` keeps it fresh."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        conn.row_factory = None  # plain tuples: sqlite3.Row costs time on 10,000-row reads

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

    def is_fresh(self, threads_dir: object) -> bool:
        """True when no thread file can have changed since the index last looked:
        the folder's marker matches and no save is in flight (or died mid-way)."""
        if self.get_state(MARKER_KEY) != dir_marker(threads_dir)[0]:
            return False
        return self.conn.execute(f"SELECT 1 FROM {WRITES} LIMIT 1").fetchone() is None

    # -- writes (callers wrap them in a transaction) -----------------------------------

    def begin_write(self, thread_id: str, pid: int, host: str, now_ns: int) -> int:
        return int(
            self.conn.execute(
                f"INSERT INTO {WRITES} (thread_id, pid, host, started_ns) VALUES (?, ?, ?, ?) "
                "RETURNING id",
                (thread_id, pid, host, now_ns),
            ).fetchone()[0]
        )

    def end_write(self, write_id: int, before: str, after: str, now_ns: int) -> int:
        """Drop the announcement; move the marker from `before` to `after` if nothing
        else changed the folder meanwhile and a full scan happened recently. Returns
        when that scan was (ns; 0: never)."""
        self.conn.execute(f"DELETE FROM {WRITES} WHERE id = ?", (write_id,))
        last_scan = int(self.get_state(LAST_SCAN_KEY) or 0)
        if self.get_state(MARKER_KEY) == before and now_ns - last_scan < CHAIN_FOR_NS:
            self.set_state(MARKER_KEY, after)
        return last_scan

    def drop_stale_writes(self, host: str, alive: Callable[[int], bool], now_ns: int) -> int:
        """Forget announcements of saves that died (dead pid here, or too old)."""
        stale = [
            row[0]
            for row in self.conn.execute(f"SELECT id, pid, host, started_ns FROM {WRITES}")
            if (row[2] == host and not alive(row[1])) or now_ns - row[3] > STALE_WRITE_NS
        ]
        self.conn.executemany(f"DELETE FROM {WRITES} WHERE id = ?", [(i,) for i in stale])
        return len(stale)

    def indexed_message_count(self, thread_id: str) -> int | None:
        row = self.conn.execute(
            f"SELECT indexed_messages FROM {THREADS} WHERE id = ?", (thread_id,)
        ).fetchone()
        return row[0] if row else None

    def upsert(self, rec: IndexRecord, file_stat: tuple[int, int, int] | None) -> None:
        """Write `rec`; its message_texts replace messages from `rec.first_message` on."""
        self.upsert_many([(rec, file_stat)])

    def upsert_many(
        self,
        items: Sequence[tuple[IndexRecord, tuple[int, int, int] | None]],
        *,
        messages: bool = True,
    ) -> None:
        """`upsert` for many records at once (in the caller's transaction).

        `messages=False`: summaries and headers only; each thread's message rows are
        dropped and its `indexed_messages` left at 0, so the next save of it indexes
        all its messages, or `add_pending_messages` adds them."""
        try:
            self._upsert_many(items, messages)
        except UnicodeEncodeError:  # a lone surrogate (a hand-written `\ud83d` escape)
            for rec, _stat in items:
                rec.clean_text()
            self._upsert_many(items, messages)  # every statement replaces: safe to rerun

    def _upsert_many(
        self, items: Sequence[tuple[IndexRecord, tuple[int, int, int] | None]], messages: bool
    ) -> None:
        # Summary rows first, then the full-text rows all together, deletes before inserts:
        # FTS5 writes its pending rows out whenever another statement opens a savepoint or
        # deletes, and building 100,000 threads one tiny segment at a time cost half the
        # first index. A thread not indexed before has no full-text rows to delete.
        placed = self._place_summaries(items, messages)
        for (num, existed), (rec, _stat) in zip(placed, items, strict=True):
            if existed:
                base = num << ROW_BITS
                first = rec.first_message if messages else 0
                self.conn.execute(f"DELETE FROM {HEADS} WHERE rowid = ?", (num,))
                self.conn.execute(
                    f"DELETE FROM {MESSAGES} WHERE rowid BETWEEN ? AND ?",
                    (base + first + 1, base + (1 << ROW_BITS) - 1),
                )
        self.conn.executemany(
            f"INSERT INTO {HEADS} (rowid, title, meta) VALUES (?, ?, ?)",
            [
                (num, rec.title, rec.meta_text)
                for (num, _), (rec, _) in zip(placed, items, strict=True)
            ],
        )
        if not messages:
            return
        rows: list[tuple[int, str]] = []
        for (num, _), (rec, _stat) in zip(placed, items, strict=True):
            _add_message_rows(rows, num, rec)
        self.conn.executemany(f"INSERT INTO {MESSAGES} (rowid, body) VALUES (?, ?)", rows)

    def behind(
        self, ids: list[str] | None = None
    ) -> list[tuple[str, tuple[int | None, int | None, int | None]]]:
        """(id, file stat as indexed) of the threads (of `ids`, else all) whose message
        rows are still to be written (`upsert_many(messages=False)`), in index order."""
        query = (
            f"SELECT id, file_ino, file_size, file_mtime_ns FROM {THREADS} "
            "WHERE indexed_messages = 0 AND message_count > 0"
        )
        if ids is None:
            rows = self.conn.execute(f"{query} ORDER BY num").fetchall()
        else:
            rows = []
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                rows += self.conn.execute(
                    f"{query} AND id IN ({','.join('?' * len(chunk))}) ORDER BY num", chunk
                ).fetchall()
        return [(tid, (ino, size, mtime)) for tid, ino, size, mtime in rows]

    def add_pending_messages(
        self,
        items: Sequence[tuple[IndexRecord, tuple[int, int, int]]],
        as_listed: dict[str, tuple[int | None, int | None, int | None]],
    ) -> list[str]:
        """Write the message rows of threads indexed without them, if each one's row is
        still as `as_listed` (its file stat then) with no message indexed (a save or a
        scan since has indexed its messages itself: it wins). Returns the ids done."""
        try:
            return self._add_pending_messages(items, as_listed)
        except UnicodeEncodeError:  # a lone surrogate; nothing was inserted yet
            for rec, _stat in items:
                rec.clean_text()
            return self._add_pending_messages(items, as_listed)

    def _add_pending_messages(
        self,
        items: Sequence[tuple[IndexRecord, tuple[int, int, int]]],
        as_listed: dict[str, tuple[int | None, int | None, int | None]],
    ) -> list[str]:
        current: dict[str, tuple] = {}
        ids = [rec.id for rec, _stat in items]
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            current.update(
                (row[0], row[1:])
                for row in self.conn.execute(
                    f"SELECT id, num, indexed_messages, message_count, file_ino, file_size, "
                    f"file_mtime_ns FROM {THREADS} WHERE id IN ({','.join('?' * len(chunk))})",
                    chunk,
                )
            )
        rows: list[tuple[int, str]] = []
        done: list[tuple[int, int]] = []
        done_ids: list[str] = []
        for rec, stat in items:
            row = current.get(rec.id)
            if row is None or row[1] != 0 or rec.first_message != 0:
                continue
            num, _indexed, count, *indexed_stat = row
            if tuple(indexed_stat) != stat or as_listed.get(rec.id) != stat:
                continue
            if count != rec.message_count:
                continue
            _add_message_rows(rows, num, rec)
            done.append((count, num))
            done_ids.append(rec.id)
        # The summary rows first: FTS5 writes its pending rows out at other statements.
        self.conn.executemany(f"UPDATE {THREADS} SET indexed_messages = ? WHERE num = ?", done)
        self.conn.executemany(f"INSERT INTO {MESSAGES} (rowid, body) VALUES (?, ?)", rows)
        return done_ids

    def _place_summaries(
        self, items: Sequence[tuple[IndexRecord, tuple[int, int, int] | None]], messages: bool
    ) -> list[tuple[int, bool]]:
        """Write the summary rows; each record's (row number, whether it was indexed before).

        Threads new to the index (all of them in a first index) go in with one
        `executemany`, numbered from max(num) + 1 in order (what INTEGER PRIMARY KEY
        picks itself); a statement per thread cost a fifth of the first index."""
        nums = self._known_nums([rec.id for rec, _stat in items])
        next_num = self.conn.execute(f"SELECT coalesce(max(num), 0) + 1 FROM {THREADS}")
        fresh = int(next_num.fetchone()[0])
        placed: list[tuple[int, bool]] = []
        new_rows = []
        for rec, file_stat in items:
            num = nums.get(rec.id)
            if num is None:
                num = nums[rec.id] = fresh
                fresh += 1
                new_rows.append((num, *_summary_values(rec, file_stat, messages)))
                placed.append((num, False))
            else:
                placed.append((num, True))
        self.conn.executemany(
            f"INSERT INTO {THREADS} (num, {_WRITTEN_COLS}) VALUES (?, {_WRITTEN_MARKS})", new_rows
        )
        for (_num, existed), (rec, file_stat) in zip(placed, items, strict=True):
            if existed:
                self.conn.execute(
                    f"INSERT INTO {THREADS} ({_WRITTEN_COLS}) VALUES ({_WRITTEN_MARKS}) "
                    f"ON CONFLICT(id) DO UPDATE SET {_UPDATED_COLS}",
                    _summary_values(rec, file_stat, messages),
                )
        return placed

    def _known_nums(self, ids: list[str]) -> dict[str, int]:
        """Row numbers of the threads of `ids` the index holds already."""
        known: dict[str, int] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            known.update(
                self.conn.execute(
                    f"SELECT id, num FROM {THREADS} WHERE id IN ({','.join('?' * len(chunk))})",
                    chunk,
                )
            )
        return known

    def remove(self, thread_id: str) -> None:
        row = self.conn.execute(
            f"DELETE FROM {THREADS} WHERE id = ? RETURNING num", (thread_id,)
        ).fetchone()
        if row:
            base = row[0] << ROW_BITS
            self.conn.execute(f"DELETE FROM {HEADS} WHERE rowid = ?", (row[0],))
            self.conn.execute(
                f"DELETE FROM {MESSAGES} WHERE rowid BETWEEN ? AND ?",
                (base, base + (1 << ROW_BITS) - 1),
            )

    def delete_state(self, key: str) -> None:
        self.conn.execute(f"DELETE FROM {STATE} WHERE key = ?", (key,))

    def clear(self) -> None:
        for table in (THREADS, HEADS, MESSAGES, STATE):
            self.conn.execute(f"DELETE FROM {table}")

    # -- reads ---------------------------------------------------------------------

    def file_stats(self) -> dict[str, tuple[int | None, int | None, int | None]]:
        rows = self.conn.execute(f"SELECT id, file_ino, file_size, file_mtime_ns FROM {THREADS}")
        return {tid: (ino, size, mtime) for tid, ino, size, mtime in rows}

    def count(self) -> int:
        return int(self.conn.execute(f"SELECT count(*) FROM {THREADS}").fetchone()[0])

    def list(
        self,
        limit: int = 50,
        offset: int = 0,
        *,
        top_level: bool = False,
        project: str | None = None,
    ) -> list[dict[str, Any]]:
        """Summary dicts (keys: SUMMARY_FIELDS), newest activity first, from `offset`;
        `top_level`: no sub-agent's thread; `project`: only threads started in that
        project root (and those recording none: they work wherever they are resumed)."""
        where, args = _project_filter(project)
        if top_level:
            where = f"{where} AND parent_thread_id IS NULL" if where else "parent_thread_id IS NULL"
        rows = self.conn.execute(
            f"SELECT {_SUMMARY_COLS} FROM {THREADS} {'WHERE ' + where if where else ''} "
            "ORDER BY last_activity_at DESC, id DESC LIMIT ? OFFSET ?",
            (*args, max(limit, 0), max(offset, 0)),
        ).fetchall()
        return [_summary(r) for r in rows]

    def count_elsewhere(self, project: str) -> int:
        """How many threads were started in a project other than `project`."""
        row = self.conn.execute(
            f"SELECT count(*) FROM {THREADS} WHERE workspace_root IS NOT NULL "
            "AND workspace_root != '' AND workspace_root != ?",
            (project,),
        ).fetchone()
        return int(row[0])

    def private_ids(self) -> set[str]:
        """Ids of the threads the index holds as private."""
        rows = self.conn.execute(f"SELECT id FROM {THREADS} WHERE is_private = 1")
        return {row[0] for row in rows}

    def children(self, parent_ids: list[str]) -> list[dict[str, Any]]:
        """Summary dicts of the sub-agents' threads of `parent_ids`, oldest first."""
        if not parent_ids:
            return []
        marks = ", ".join("?" * len(parent_ids))
        rows = self.conn.execute(
            f"SELECT {_SUMMARY_COLS} FROM {THREADS} WHERE parent_thread_id IN ({marks}) "
            "ORDER BY created_at, id",
            parent_ids,
        ).fetchall()
        return [_summary(r) for r in rows]

    def recent(
        self, workspace_root: str | None = None, limit: int = 200, words: int = 80
    ) -> list[dict[str, Any]]:
        """Summary dicts newest activity first, only threads started in `workspace_root`
        when given, each with `first_words`: the start of its first message."""
        where, args = ("WHERE workspace_root = ?", [workspace_root]) if workspace_root else ("", [])
        rows = self.conn.execute(
            f"SELECT {_SUMMARY_COLS}, num FROM {THREADS} {where} "
            "ORDER BY last_activity_at DESC, id DESC LIMIT ?",
            (*args, max(limit, 0)),
        ).fetchall()
        found = []
        for row in rows:
            summary = _summary(row[:-1])
            summary["first_words"] = self._first_words(row[-1], words)
            found.append(summary)
        return found

    def _first_words(self, num: int, length: int) -> str:
        try:
            row = self.conn.execute(
                f"SELECT substr(body, 1, ?) FROM {MESSAGES} WHERE rowid = ?",
                (length * 2, (num << ROW_BITS) | 1),  # the thread's first message
            ).fetchone()
        except sqlite3.Error:
            return ""
        return first_words(row[0] if row else "", length)

    def resolve(self, prefix: str, limit: int = 10) -> list[str]:
        """Ids starting with `prefix` (the `T-` may be left out), at most `limit`; when
        none does, ids whose random tail (the last group, after the time) starts or ends
        with it: ids begin with their creation time, so their starts are alike and a
        person copies a few characters from the end as easily."""
        ref = prefix.strip().lower()
        start = "T-" + (ref[2:] if ref.startswith("t-") else ref)
        rows = self.conn.execute(
            f"SELECT id FROM {THREADS} WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
            (start, start + "\U0010ffff", limit),
        ).fetchall()
        if not rows and MIN_TAIL <= len(ref) <= TAIL_LENGTH and not ref.strip(_HEX_DIGITS):
            rows = self.conn.execute(
                f"SELECT id FROM {THREADS} WHERE substr(id, -{TAIL_LENGTH}, ?1) = ?2 "
                "OR substr(id, -?1) = ?2 ORDER BY id LIMIT ?3",
                (len(ref), ref, limit),
            ).fetchall()
        return [r[0] for r in rows]

    def search(self, query: str, limit: int = 20) -> list[tuple[dict[str, Any], str, float]]:
        """(summary dict, highlighted snippet, rank) per thread, best first.

        Threads whose header matches (title, tags, branch, repo, commits, id) come
        first, ranked by bm25 among headers (title x3); then threads that match only
        in messages, ranked by bm25 among messages. Each ranking covers at most
        RANK_WINDOW matching rows: all of them for specific words, the most recently
        indexed ones for a word found everywhere (bm25 costs ~15 us a row; ranking the
        30,000 messages holding "the" would take half a second). Threads are indexed
        in creation order, so the window favours newer threads.
        """
        match = fts_query(query)
        if match is None or limit <= 0:
            return []
        best: dict[int, tuple[str, int, float]] = {}  # num -> (table, rowid, rank)
        for table, shift in ((HEADS, 0), (MESSAGES, ROW_BITS)):
            for rowid, rank in self._ranked(table, match):
                best.setdefault(rowid >> shift, (table, rowid, rank))
            if len(best) >= limit:
                break
        chosen = list(best.items())[:limit]
        if not chosen:
            return []
        marks = ",".join("?" * len(chosen))
        summaries = {
            r[0]: _summary(r[1:])
            for r in self.conn.execute(
                f"SELECT num, {_SUMMARY_COLS} FROM {THREADS} WHERE num IN ({marks})",
                [num for num, _ in chosen],
            )
        }
        texts = {}
        for table, columns in ((HEADS, "title || ' ' || meta"), (MESSAGES, "body")):
            rowids = [rowid for _, (t, rowid, _) in chosen if t == table]
            if rowids:
                texts.update(
                    ((table, r[0]), r[1])
                    for r in self.conn.execute(
                        f"SELECT rowid, {columns} FROM {table} "
                        f"WHERE rowid IN ({','.join('?' * len(rowids))})",
                        rowids,
                    )
                )
        terms = word_parts(query)
        results = []
        for num, (table, rowid, rank) in chosen:
            if num not in summaries:
                continue
            if table == HEADS:  # the title, branch and id are on the result's line already
                snippet = self._head_snippet(num, match, summaries[num], terms)
            else:
                snippet = make_snippet(texts.get((table, rowid), ""), terms)
            results.append((summaries[num], snippet, rank))
        return results

    def _head_snippet(self, num: int, match: str, summary: dict[str, Any], terms: list[str]) -> str:
        """For a thread found by its header: a message of it that matches too, else the
        header words that matched beyond what the result line shows (a tag, a commit,
        the repo or folder), else nothing."""
        row = self.conn.execute(
            f"SELECT body FROM {MESSAGES} WHERE {MESSAGES} MATCH ? AND rowid >= ? "
            "AND rowid < ? ORDER BY rowid LIMIT 1",
            (match, num << ROW_BITS, (num + 1) << ROW_BITS),
        ).fetchone()
        if row is not None:
            return make_snippet(row[0], terms)
        shown = {summary.get("id"), summary.get("git_branch")}
        head = self.conn.execute(f"SELECT meta FROM {HEADS} WHERE rowid = ?", (num,)).fetchone()
        rest = " ".join(w for w in (head[0] if head else "").split() if w not in shown)
        snippet = make_snippet(rest, terms)
        return snippet if HIGHLIGHT[0] in snippet else ""

    def _ranked(self, table: str, match: str) -> list[tuple[int, float]]:
        """(rowid, bm25) of the best rows among the RANK_WINDOW most recent matches."""
        edge = self.conn.execute(
            f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
            (match, RANK_WINDOW - 1),
        ).fetchone()
        window, args = ("AND rowid >= ?", (match, edge[0])) if edge else ("", (match,))
        return self.conn.execute(
            f"SELECT rowid, rank FROM {table} WHERE {table} MATCH ? {window} ORDER BY rank",
            args,
        ).fetchall()


def _project_filter(project: str | None) -> tuple[str, list[str]]:
    if project is None:
        return "", []
    return "(workspace_root = ? OR workspace_root IS NULL OR workspace_root = '')", [project]


def first_words(text: str, length: int = 80) -> str:
    """The start of a message as a list shows it: whitespace runs made one space."""
    return " ".join(text[: length * 2].split())[:length]


def _summary(row: sqlite3.Row | tuple) -> dict[str, Any]:
    summary: dict[str, Any] = dict(zip(SUMMARY_FIELDS, row, strict=True))
    summary["is_private"] = bool(summary["is_private"])
    return summary


def _summary_values(
    rec: IndexRecord, file_stat: tuple[int, int, int] | None, messages: bool = True
) -> tuple:
    """The summary row of `rec`, in the order of _WRITTEN_FIELDS (`messages`: its message
    rows are written too, else `indexed_messages` is 0)."""
    ino, size, mtime = file_stat or (None, None, None)
    return (
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
        rec.message_count if messages else 0,
        ino,
        size,
        mtime,
        rec.parent_thread_id,
    )


def _add_message_rows(rows: list[tuple[int, str]], num: int, rec: IndexRecord) -> None:
    """Append (rowid, text) of the record's messages from `first_message` on (empty ones
    left out)."""
    first = (num << ROW_BITS) + rec.first_message + 1
    texts = rec.message_texts[: MAX_MESSAGES_INDEXED - rec.first_message]
    rows.extend(row for row in zip(range(first, first + len(texts)), texts, strict=True) if row[1])
