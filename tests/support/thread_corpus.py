"""A varied set of thread files for the first-index tests, and what an index built
from them holds and finds (tests/store/test_first_index.py, test_message_rows_later.py)."""

from __future__ import annotations

import random
from pathlib import Path

from loom.paths import LoomPaths
from loom.store import index_sync
from loom.store.db import connect, migrate
from loom.store.index import COMPONENT, MIGRATIONS, ThreadIndex
from loom.store.index_parse import parse_file
from loom.store.index_sync import write_transaction
from loom.store.serialize import thread_to_bytes
from tests.support.threads import thread_with

WORDS = [
    "the",
    "login",
    "handler",
    "parser",
    "cache",
    "retry",
    "timeout",
    "token",
    "session",
    "query",
    "branch",
    "authentication",
    "authorization",
    "feature/auth",
    "github.com/ana/proj",
    "a1b2c3d4",
    "ünïcode",
    "naïve",
    "x",
    "y",
    "z",
    "deploy",
    "rollback",
    "migration",
    "index",
    "search",
]
QUERIES = [
    "login",
    "auth",
    "feature/auth",
    "github.com/ana/proj",
    "a1b2",
    "unicode",
    "naive",
    "cache retry",
    "the",
    "security",
    "T-",
    "rollback migration",
    "nothing-matches-this",
]


def write_threads(paths: LoomPaths, count: int) -> list[str]:
    rng = random.Random(25)
    paths.threads_dir.mkdir(parents=True, exist_ok=True)
    ids = []
    for i in range(count):
        texts = [
            " ".join(rng.choices(WORDS, k=rng.randint(1, 30))) for _ in range(rng.randint(1, 9))
        ]
        if i % 7 == 0:
            texts.append("")  # empty messages are left out of the full-text rows
        thread = thread_with(
            *texts,
            git_branch=f"feature/{rng.choice(WORDS)}-{i % 5}",
            git_commits=[f"{rng.getrandbits(64):016x}"],
        )
        thread.metadata.title = " ".join(rng.choices(WORDS, k=3))
        thread.metadata.tags = ["security"] if i % 11 == 0 else []
        (paths.threads_dir / f"{thread.id}.json").write_bytes(thread_to_bytes(thread))
        ids.append(thread.id)
    return ids


def one_by_one(paths: LoomPaths, ids: list[str], database: Path) -> ThreadIndex:
    """Each file indexed in its own transaction, the way a save indexes its thread."""
    conn = connect(database)
    migrate(conn, COMPONENT, MIGRATIONS)
    index = ThreadIndex(conn)
    for tid in sorted(ids):
        with write_transaction(index):
            parsed = [parse_file(str(paths.threads_dir), tid)]
            index_sync.index_files(index, paths, parsed)
    return index


def contents(index: ThreadIndex) -> list[list[tuple]]:
    conn = index.conn
    return [
        conn.execute("SELECT * FROM thread_index_threads ORDER BY num").fetchall(),
        conn.execute("SELECT rowid, title, meta FROM thread_index_heads ORDER BY rowid").fetchall(),
        conn.execute("SELECT rowid, body FROM thread_index_messages ORDER BY rowid").fetchall(),
    ]


def found(index: ThreadIndex) -> dict[str, list[tuple]]:
    return {
        query: [
            (summary["id"], snippet, rank) for summary, snippet, rank in index.search(query, 50)
        ]
        for query in QUERIES
    }
