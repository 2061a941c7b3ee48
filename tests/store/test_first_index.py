"""The first index of many threads (the bulk path of index_sync.ensure_fresh) holds and
finds exactly what indexing the same files one by one (as saves do) holds and finds."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from tests.support.thread_corpus import contents, found, one_by_one, write_threads

from loom.paths import LoomPaths
from loom.store import index_bulk, index_sync
from loom.store.index_messages import complete_messages
from loom.store.index_sync import ensure_fresh, open_index


@pytest.fixture
def bulk(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bulk path for a few hundred files, in several commit groups."""
    monkeypatch.setattr(index_sync, "PROGRESS_MIN_FILES", 100)
    monkeypatch.setattr(index_sync, "BULK_COMMIT_BYTES", 200_000)


@pytest.mark.usefixtures("bulk")
def test_first_index_finds_exactly_what_indexing_one_by_one_finds(tmp_path: Path) -> None:
    paths = LoomPaths.from_env()
    ids = write_threads(paths, 300)
    index, note = open_index(paths)
    assert note is None
    shown: list[tuple[int, int]] = []
    report = ensure_fresh(index, paths, progress=lambda done, total: shown.append((done, total)))
    assert sorted(report.indexed) == sorted(ids)
    assert shown[0] == (0, 300) and shown[-1] == (300, 300)  # progress as before
    assert complete_messages(index, paths) == len(ids)  # the rows a search writes first
    single = one_by_one(paths, ids, tmp_path / "one-by-one.db")
    assert contents(index) == contents(single)
    hits = found(index)
    assert hits == found(single)
    assert len(hits["login"]) == 50 and len(hits["security"]) == 28
    assert hits["nothing-matches-this"] == []


@pytest.mark.usefixtures("bulk")
def test_first_index_writes_in_groups_and_leaves_no_big_wal_or_setting() -> None:
    paths = LoomPaths.from_env()
    write_threads(paths, 300)
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
