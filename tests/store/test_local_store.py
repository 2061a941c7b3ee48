from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

import pytest
from tests.support.threads import make_thread

from loom.core.messages import AssistantMessage, UserMessage
from loom.core.thread import Thread
from loom.paths import LoomPaths
from loom.store.base import AmbiguousThreadId, ThreadLocked, ThreadNotFound
from loom.store.index_sync import rebuild
from loom.store.local import LocalThreadStore
from loom.store.serialize import thread_to_bytes


@pytest.fixture
def store() -> LocalThreadStore:
    return LocalThreadStore()


def test_save_load_round_trip_keeps_unknown_fields(store: LocalThreadStore) -> None:
    thread = make_thread()
    store.save(thread)
    data = json.loads(store.path_for(thread.id).read_text())
    data["from_a_newer_loom"] = {"x": 1}
    data["conversation"]["messages"][0]["reaction"] = "+1"
    store.path_for(thread.id).write_text(json.dumps(data, indent=2))
    loaded = store.load(thread.id)
    assert loaded is not None and loaded.version == thread.version
    loaded.touch()
    store.save(loaded)
    again = json.loads(store.path_for(thread.id).read_text())
    assert again["from_a_newer_loom"] == {"x": 1}
    assert again["conversation"]["messages"][0]["reaction"] == "+1"
    assert store.load("T-01a00000-0000-7000-8000-000000000000") is None
    assert store.load("../../etc/passwd") is None
    bad = make_thread()
    bad.id = "../escape"
    with pytest.raises(ValueError, match="not a thread id"):
        store.save(bad)


def test_file_bytes_equal_pydantic_pretty_json_across_appends(store: LocalThreadStore) -> None:
    thread = make_thread(messages=7)
    thread.metadata.tags = ["auth", "ünïcode"]
    for step in range(3):
        assert thread_to_bytes(thread) == thread.model_dump_json(indent=2).encode()
        thread.messages[-1].content += f" more {step}"  # the last message may still grow
        thread.append(UserMessage(content=f"next {step}"))
    assert thread_to_bytes(thread) == thread.model_dump_json(indent=2).encode()
    store.save(thread)
    assert store.path_for(thread.id).read_bytes() == thread.model_dump_json(indent=2).encode()
    thread.conversation.messages[2] = AssistantMessage(content="replaced object")
    assert thread_to_bytes(thread) == thread.model_dump_json(indent=2).encode()


def test_list_is_newest_activity_first_and_limited(store: LocalThreadStore) -> None:
    threads = [make_thread(f"thread {i}") for i in range(5)]
    for thread in threads:
        store.save(thread)
    threads[1].touch()
    store.save(threads[1])
    listed = store.list(limit=3)
    assert [s.id for s in listed] == [threads[1].id, threads[4].id, threads[3].id]
    assert listed[0].title == "thread 1" and listed[0].message_count == 3
    assert len(store.list()) == 5


def test_search_finds_every_field_with_snippets(store: LocalThreadStore) -> None:
    target = make_thread(
        "Add authentication to API",
        git_branch="feature/auth",
        git_remote_url="github.com/ana/proj",
        git_commits=["a1b2c3d4e5f60718", "0fedcba987654321"],
    )
    target.metadata.tags = ["security"]
    target.append(AssistantMessage(content="The session cookie is now HttpOnly."))
    target.touch()
    store.save(target)
    store.save(make_thread("Unrelated chore", git_branch="main"))
    for query in [
        "authentication",
        "authent",
        "github.com/ana/proj",
        "a1b2c3d",
        "0fedcba",
        "security",
        "httponly",
        "cookie HttpOnly",
    ]:
        hits = store.search(query)
        assert [h.summary.id for h in hits] == [target.id], query
        assert "**" in hits[0].snippet, query
    # the branch (like the title and id) is on the result's line: no snippet repeats it
    (by_branch,) = store.search("feature/auth")
    assert by_branch.summary.id == target.id and by_branch.snippet == ""
    (by_commit,) = store.search("a1b2c3d")
    assert "feature/auth" not in by_commit.snippet and target.id not in by_commit.snippet
    assert store.search("nonexistentword") == []
    assert store.search('"') == []


def test_title_match_ranks_above_a_mention_in_messages(store: LocalThreadStore) -> None:
    mention = make_thread("Refactor parser")
    mention.append(UserMessage(content="also think about caching later"))
    store.save(mention)
    titled = make_thread("Caching layer for the API")
    store.save(titled)
    assert [h.summary.id for h in store.search("caching")] == [titled.id, mention.id]


def test_incremental_index_equals_a_rebuild(store: LocalThreadStore) -> None:
    thread = make_thread(messages=4)
    store.save(thread)
    for i in range(5):
        thread.messages[-1].content += " streamed"
        thread.append(UserMessage(content=f"follow-up number{i}"))
        thread.touch()
        store.save(thread)
    incremental = _fts_rows(store)
    rebuild(store.index, store.paths)
    assert _fts_rows(store) == incremental
    assert [h.summary.id for h in store.search("number4")] == [thread.id]
    assert store.search("streamed")[0].summary.id == thread.id


def _fts_rows(store: LocalThreadStore) -> list[tuple]:
    conn = store.index.conn
    heads = conn.execute("SELECT title, meta FROM thread_index_heads").fetchall()
    bodies = conn.execute(
        "SELECT rowid & 1048575, body FROM thread_index_messages ORDER BY rowid & 1048575"
    ).fetchall()
    return [*heads, *bodies]


def test_resolve_accepts_prefixes_like_git(store: LocalThreadStore) -> None:
    a, b = make_thread(), make_thread()
    store.save(a)
    store.save(b)
    assert store.resolve(a.id) == a.id
    common = os.path.commonprefix([a.id, b.id])  # noqa: RUF071 (strings, not paths)
    assert store.resolve(a.id[: len(common) + 1]) == a.id
    assert store.resolve(a.id[2 : len(common) + 1]) == a.id  # without "T-"
    with pytest.raises(AmbiguousThreadId) as err:
        store.resolve(common)
    assert a.id in str(err.value) and "type more" in str(err.value)
    with pytest.raises(ThreadNotFound):
        store.resolve("T-ffff")
    with pytest.raises(ThreadNotFound):
        store.resolve("../trash")


def test_delete_is_soft_and_restorable(store: LocalThreadStore) -> None:
    thread = make_thread("keep me safe")
    store.save(thread)
    store.delete(thread.id)
    assert store.list() == [] and store.search("safe") == []
    assert store.load(thread.id) is None
    assert store.deleted() == [thread.id]
    assert store.restore(thread.id[:14]) == thread.id
    assert [s.id for s in store.list()] == [thread.id]
    assert store.search("safe")[0].summary.id == thread.id
    with pytest.raises(ThreadNotFound):
        store.restore(thread.id)


def test_delete_refuses_a_thread_open_for_writing(store: LocalThreadStore) -> None:
    thread = make_thread()
    store.save(thread)
    with store.open_for_writing(thread.id), pytest.raises(ThreadLocked):
        store.delete(thread.id)
    store.delete(thread.id)


def test_a_file_written_behind_the_index_still_lists(store: LocalThreadStore) -> None:
    indexed = make_thread("indexed")
    store.save(indexed)
    assert len(store.list()) == 1
    # Another process (or a crash between rename and index update) leaves a file the
    # index has not seen; it must show up in the very next list.
    stranger = make_thread("written by someone else")
    (store.threads_dir / f"{stranger.id}.json").write_bytes(thread_to_bytes(stranger))
    other = LocalThreadStore()
    assert {s.title for s in other.list()} == {"indexed", "written by someone else"}
    # Replaced in place by an atomic rename (new inode) within the same clock tick.
    stranger.metadata.title = "renamed title"
    tmp = store.threads_dir / ".tmp"
    tmp.write_bytes(thread_to_bytes(stranger))
    os.replace(tmp, store.threads_dir / f"{stranger.id}.json")
    assert "renamed title" in {s.title for s in LocalThreadStore().list()}
    (store.threads_dir / f"{indexed.id}.json").unlink()
    assert [s.title for s in LocalThreadStore().list()] == ["renamed title"]


def test_fresh_index_does_not_rescan_when_nothing_changed(store: LocalThreadStore) -> None:
    store.save(make_thread())
    old = time.time() - 10  # out of the racy window
    os.utime(store.threads_dir, (old, old))
    store.list()
    assert store.last_scan.scanned
    store.list()
    assert not store.last_scan.scanned


def test_damaged_database_is_moved_aside_and_rebuilt(loom_home: Path) -> None:
    store = LocalThreadStore()
    thread = make_thread("survives a broken index")
    store.save(thread)
    store.close()
    paths = LoomPaths.from_env()
    for suffix in ("-wal", "-shm"):
        Path(f"{paths.database}{suffix}").unlink(missing_ok=True)
    paths.database.write_bytes(b"this is not a database" * 100)
    fresh = LocalThreadStore()
    assert [s.title for s in fresh.list()] == ["survives a broken index"]
    assert "moved" in (fresh.index_note or "")
    assert list(paths.data.glob("loom.db.damaged-*"))


def test_index_failure_never_fails_a_save(store: LocalThreadStore, caplog) -> None:
    thread = make_thread()
    store.save(thread)
    store.index.conn.close()  # any sqlite error during the index update
    thread.touch()
    store.save(thread)
    assert "search index was not updated" in caplog.text
    assert Thread.from_json(store.path_for(thread.id).read_bytes()).version == thread.version
    assert LocalThreadStore().list()[0].version == thread.version


def test_one_store_shared_by_worker_threads(store: LocalThreadStore) -> None:
    from concurrent.futures import ThreadPoolExecutor

    threads = [make_thread(f"worker {i}") for i in range(8)]

    def work(thread: Thread) -> int:
        for _ in range(5):
            thread.append(UserMessage(content="more"))
            thread.touch()
            store.save(thread)
            store.list()
        return len(store.search("worker"))

    with ThreadPoolExecutor(4) as pool:
        assert all(n >= 1 for n in pool.map(work, threads))
    assert {s.title for s in store.list()} == {f"worker {i}" for i in range(8)}
    assert all(s.version == 6 for s in store.list())


def test_list_works_when_loom_db_cannot_be_opened(store: LocalThreadStore) -> None:
    store.save(make_thread("still listed"))
    store.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{store.paths.database}{suffix}").unlink(missing_ok=True)
    store.paths.database.mkdir()  # a folder where the database file should be
    other = LocalThreadStore()
    assert [s.title for s in other.list()] == ["still listed"]
    assert "not usable" in (other.index_note or "")


def test_a_busy_index_is_used_as_is_not_rebuilt_in_memory(
    store: LocalThreadStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    from loom.store import index_sync

    store.save(make_thread("already indexed"))

    def locked(*args: object, **kwargs: object) -> None:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(index_sync, "ensure_fresh", locked)
    assert [s.title for s in store.list()] == ["already indexed"]
    assert "busy" in (store.index_note or "")


def _settle(store: LocalThreadStore) -> None:
    """Age the folder's mtime past the racy window and let a scan record the marker."""
    old = time.time() - 10
    os.utime(store.threads_dir, (old, old))
    store.list()


def test_a_list_right_after_a_save_does_not_rescan(store: LocalThreadStore) -> None:
    thread = make_thread("busy session")
    store.save(thread)
    _settle(store)
    thread.append(UserMessage(content="one more"))
    thread.touch()
    store.save(thread)  # announces itself, renames, indexes, moves the marker on
    other = LocalThreadStore()
    assert [s.version for s in other.list()] == [thread.version]
    assert not other.last_scan.scanned


def test_a_save_that_died_after_its_rename_is_found_even_if_the_marker_matches(
    store: LocalThreadStore,
) -> None:
    from loom.store.index import MARKER_KEY, WRITES, dir_marker

    thread = make_thread("interrupted")
    store.save(thread)
    _settle(store)
    # What a save killed between its rename and its index update leaves behind: its
    # announcement, and the new file. Worst case: the folder's mtime tick did not move.
    conn = store.index.conn
    conn.execute(
        f"INSERT INTO {WRITES} (thread_id, pid, host, started_ns) VALUES (?, ?, ?, ?)",
        (thread.id, 2**22 + 12345, socket.gethostname(), time.time_ns()),
    )
    thread.append(UserMessage(content="saved just before the kill"))
    thread.touch()
    tmp = store.threads_dir / ".x.tmp"
    tmp.write_bytes(thread_to_bytes(thread))
    os.replace(tmp, store.path_for(thread.id))
    conn.execute(
        f"UPDATE thread_index_state SET value = ? WHERE key = '{MARKER_KEY}'",
        (dir_marker(store.threads_dir)[0],),
    )
    assert [s.version for s in store.list()] == [thread.version]
    assert store.last_scan.scanned
    assert conn.execute(f"SELECT count(*) FROM {WRITES}").fetchone()[0] == 0  # cleaned up


def _saved_a_minute_after_the_last_scan(store: LocalThreadStore) -> Thread:
    """A thread saved and listed, with the last full scan made to look a minute old."""
    from loom.store.index import LAST_SCAN_KEY

    thread = make_thread()
    store.save(thread)
    _settle(store)
    a_minute_ago = time.time_ns() - 61 * 10**9
    store.index.conn.execute(
        "UPDATE thread_index_state SET value = ? WHERE key = ?", (str(a_minute_ago), LAST_SCAN_KEY)
    )
    return thread


def test_a_save_a_minute_after_the_last_scan_has_the_folder_checked_in_the_background(
    store: LocalThreadStore,
) -> None:
    thread = _saved_a_minute_after_the_last_scan(store)
    # another program drops a thread file in, and the folder's mtime tick hides it
    other = make_thread("dropped in by another program")
    mtime = store.threads_dir.stat().st_mtime_ns
    (store.threads_dir / f"{other.id}.json").write_bytes(thread_to_bytes(other))
    os.utime(store.threads_dir, ns=(mtime, mtime))
    checks = store.folder_check.completed
    thread.touch()
    store.save(thread)  # no longer vouches by itself: the store re-checks the folder
    store.folder_check.wait(timeout=30)
    assert store.folder_check.completed == checks + 1
    listed = store.list()
    assert not store.last_scan.scanned  # `loom list` after the session: index only
    assert {s.id for s in listed} == {thread.id, other.id}  # the check found the file
    # and saves vouch again: a list after the next save needs no scan either
    thread.touch()
    store.save(thread)
    assert [s.version for s in store.list() if s.id == thread.id] == [thread.version]
    assert not store.last_scan.scanned


def test_the_background_check_leaves_a_bad_file_to_the_next_list_which_reports_it(
    store: LocalThreadStore,
) -> None:
    thread = _saved_a_minute_after_the_last_scan(store)
    bad = store.threads_dir / "T-019a3c1e-8f2b-7c41-9a55-3e0f5d2b7a10.json"
    bad.write_text("{not json")
    thread.touch()
    store.save(thread)
    store.folder_check.wait(timeout=30)
    assert bad.exists()  # nobody was there to be told: not quarantined in the background
    store.list()
    assert store.last_scan.scanned and store.last_scan.quarantined  # the list says so
    assert not bad.exists()
