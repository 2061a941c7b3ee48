"""The first index of many threads (the bulk path of index_sync.ensure_fresh) holds and
finds exactly what indexing the same files one by one (as saves do) holds and finds."""

from __future__ import annotations

import os
import random
import sqlite3
from pathlib import Path

import pytest
from tests.support.threads import thread_with

from loom.paths import LoomPaths
from loom.store import index_bulk, index_sync
from loom.store.db import connect, migrate
from loom.store.index import COMPONENT, MIGRATIONS, ThreadIndex
from loom.store.index_parse import parse_file
from loom.store.index_sync import ScanReport, ensure_fresh, open_index, write_transaction
from loom.store.serialize import thread_to_bytes

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


def _write_threads(paths: LoomPaths, count: int) -> list[str]:
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


def _one_by_one(paths: LoomPaths, ids: list[str], database: Path) -> ThreadIndex:
    """Each file indexed in its own transaction, the way a save indexes its thread."""
    conn = connect(database)
    migrate(conn, COMPONENT, MIGRATIONS)
    index = ThreadIndex(conn)
    for tid in sorted(ids):
        with write_transaction(index):
            parsed = [parse_file(str(paths.threads_dir), tid)]
            index_sync._index_batch(index, paths, parsed, ScanReport(), fix=True)
    return index


def _contents(index: ThreadIndex) -> list[list[tuple]]:
    conn = index.conn
    return [
        conn.execute("SELECT * FROM thread_index_threads ORDER BY num").fetchall(),
        conn.execute("SELECT rowid, title, meta FROM thread_index_heads ORDER BY rowid").fetchall(),
        conn.execute("SELECT rowid, body FROM thread_index_messages ORDER BY rowid").fetchall(),
    ]


def _found(index: ThreadIndex) -> dict[str, list[tuple]]:
    return {
        query: [
            (summary["id"], snippet, rank) for summary, snippet, rank in index.search(query, 50)
        ]
        for query in QUERIES
    }


@pytest.fixture
def bulk(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bulk path for a few hundred files, in several commit groups."""
    monkeypatch.setattr(index_sync, "PROGRESS_MIN_FILES", 100)
    monkeypatch.setattr(index_sync, "BULK_COMMIT_BYTES", 200_000)


@pytest.mark.usefixtures("bulk")
def test_first_index_finds_exactly_what_indexing_one_by_one_finds(tmp_path: Path) -> None:
    paths = LoomPaths.from_env()
    ids = _write_threads(paths, 300)
    index, note = open_index(paths)
    assert note is None
    shown: list[tuple[int, int]] = []
    report = ensure_fresh(index, paths, progress=lambda done, total: shown.append((done, total)))
    assert sorted(report.indexed) == sorted(ids)
    assert shown[0] == (0, 300) and shown[-1] == (300, 300)  # progress as before
    one_by_one = _one_by_one(paths, ids, tmp_path / "one-by-one.db")
    assert _contents(index) == _contents(one_by_one)
    found = _found(index)
    assert found == _found(one_by_one)
    assert len(found["login"]) == 50 and len(found["security"]) == 28
    assert found["nothing-matches-this"] == []


@pytest.mark.usefixtures("bulk")
def test_first_index_writes_in_groups_and_leaves_no_big_wal_or_setting() -> None:
    paths = LoomPaths.from_env()
    _write_threads(paths, 300)
    index, _ = open_index(paths)
    statements: list[str] = []
    index.conn.set_trace_callback(statements.append)
    ensure_fresh(index, paths)
    index.conn.set_trace_callback(None)
    per_thread_lookups = [
        s for s in statements if s.startswith("SELECT 1 FROM thread_index_threads")
    ]
    assert per_thread_lookups == []  # one query per group, not one per thread
    commits = statements.count("COMMIT")
    groups = sum(1 for s in statements if s.startswith("SELECT id, num FROM thread_index_threads"))
    assert 2 <= groups < 300 // index_sync.BATCH + 4 and commits == groups + 2
    wal = Path(f"{paths.database}-wal")
    assert not wal.exists() or wal.stat().st_size < 64 * 1024  # emptied after the build
    hash_size = index.conn.execute(
        "SELECT v FROM thread_index_messages_config WHERE k = 'hashsize'"
    ).fetchone()
    assert hash_size == (index_bulk.DEFAULT_HASH_BYTES,)
    later = sqlite3.connect(paths.database)  # another reader sees the same index
    assert later.execute("SELECT count(*) FROM thread_index_threads").fetchone() == (300,)
    later.close()
    assert os.path.getsize(paths.database) > 0
