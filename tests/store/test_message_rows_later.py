"""A big first index writes summaries and headers only; the message rows are written
before the first search (loom.store.index_messages), so lists are fast and searches
find exactly what an index built in one go finds."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.thread_corpus import QUERIES, contents, found, one_by_one, write_threads

from loom.core.messages import UserMessage
from loom.paths import LoomPaths
from loom.session.helpers.lookup import recent_threads
from loom.store import index_messages, index_sync
from loom.store.index import MESSAGES, MESSAGES_PENDING_KEY, ROW_BITS, ThreadIndex
from loom.store.index_fresh import answer_from_index
from loom.store.index_messages import complete_messages, messages_pending
from loom.store.index_sync import ensure_fresh, open_index
from loom.store.local import LocalThreadStore

THREADS = 600


@pytest.fixture
def bulk(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bulk path for a few hundred files; the completion in several groups."""
    monkeypatch.setattr(index_sync, "PROGRESS_MIN_FILES", 100)
    monkeypatch.setattr(index_sync, "BULK_COMMIT_BYTES", 200_000)
    monkeypatch.setattr(index_messages, "BULK_COMMIT_BYTES", 200_000)


def _message_rows(index: ThreadIndex) -> int:
    return int(index.conn.execute(f"SELECT count(*) FROM {MESSAGES}").fetchone()[0])


def _rows_of(index: ThreadIndex, thread_id: str) -> list[tuple[int, str]]:
    num = index.conn.execute(
        "SELECT num FROM thread_index_threads WHERE id = ?", (thread_id,)
    ).fetchone()[0]
    return index.conn.execute(
        f"SELECT rowid - ?, body FROM {MESSAGES} WHERE rowid >= ? AND rowid < ? ORDER BY rowid",
        (num << ROW_BITS, num << ROW_BITS, (num + 1) << ROW_BITS),
    ).fetchall()


def save_with_note(store: LocalThreadStore, thread_id: str, note: str) -> None:
    """Load the thread, add a user message and save it, as a session would."""
    thread = store.load(thread_id)
    assert thread is not None
    thread.append(UserMessage(content=note))
    thread.touch()
    store.save(thread)


def _hits(store: LocalThreadStore, query: str) -> list[tuple[str, str]]:
    return [(hit.summary.id, hit.snippet) for hit in store.search(query, 50)]


@pytest.mark.usefixtures("bulk")
def test_lists_first_then_the_first_search_finds_what_a_full_index_finds(tmp_path: Path) -> None:
    paths = LoomPaths.from_env()
    ids = write_threads(paths, THREADS)
    store = LocalThreadStore(paths)
    listed = store.list(limit=THREADS + 10)
    assert sorted(row.id for row in listed) == sorted(ids)
    index = store.index
    assert _message_rows(index) == 0 and messages_pending(index)
    assert len(index.behind()) == THREADS
    full = one_by_one(paths, ids, tmp_path / "full.db")
    assert _message_rows(full) > 2000
    for query in QUERIES:
        expected = [(summary["id"], snippet) for summary, snippet, _ in full.search(query, 50)]
        assert _hits(store, query) == expected, query
    assert not messages_pending(index) and index.get_state(MESSAGES_PENDING_KEY) is None
    assert contents(index) == contents(full)  # same rows, same indexed_messages
    store.close()


@pytest.mark.usefixtures("bulk")
def test_a_save_between_the_phases_wins_and_leaves_no_duplicate_rows(tmp_path: Path) -> None:
    paths = LoomPaths.from_env()
    ids = write_threads(paths, THREADS)
    store = LocalThreadStore(paths)
    store.list()
    save_with_note(store, ids[3], "a zebracorn note saved before any search")
    index = store.index
    saved_rows = _rows_of(index, ids[3])
    texts = [row[1] for row in saved_rows]
    assert len(saved_rows) == len(set(row[0] for row in saved_rows)) >= 2
    assert texts[-1] == "a zebracorn note saved before any search"
    assert _message_rows(index) == len(saved_rows)  # only the saved thread's rows
    # Another process saves a thread of a later group while the completion runs.
    later = ids[-5]
    other = LocalThreadStore(paths)
    saved_during: list[int] = []

    def save_during(done: int, total: int) -> None:
        if done and not saved_during:
            save_with_note(other, later, "an okapi note saved mid-way")
            saved_during.append(done)

    completed = complete_messages(index, paths, save_during)
    other.close()
    assert saved_during and saved_during[0] < THREADS  # it ran between two groups
    assert completed == THREADS - 2  # the two saved threads were indexed by their saves
    assert _rows_of(index, ids[3]) == saved_rows
    assert _rows_of(index, later)[-1][1] == "an okapi note saved mid-way"
    assert not messages_pending(index)
    assert [hit.summary.id for hit in store.search("zebracorn")] == [ids[3]]
    assert [hit.summary.id for hit in store.search("okapi")] == [later]
    full = one_by_one(paths, ids, tmp_path / "full.db")
    assert contents(index)[2] == contents(full)[2]  # every message row, once
    store.close()


@pytest.mark.usefixtures("bulk")
def test_an_interrupted_completion_is_resumed_by_the_next_search(tmp_path: Path) -> None:
    paths = LoomPaths.from_env()
    ids = write_threads(paths, THREADS)
    index, _ = open_index(paths)
    ensure_fresh(index, paths)
    calls: list[tuple[int, int]] = []

    def stop_after_first_group(done: int, total: int) -> None:
        calls.append((done, total))
        if done:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        complete_messages(index, paths, stop_after_first_group)
    first_group = calls[-1][0]
    assert calls[0] == (0, THREADS) and 0 < first_group < THREADS
    assert messages_pending(index) and len(index.behind()) == THREADS - first_group
    progress: list[tuple[int, int]] = []
    assert complete_messages(index, paths, lambda *done: progress.append(done)) == (
        THREADS - first_group
    )
    assert progress[0] == (0, THREADS - first_group) and progress[-1][0] == THREADS - first_group
    assert not messages_pending(index) and index.behind() == []
    assert contents(index) == contents(one_by_one(paths, ids, tmp_path / "full.db"))
    assert complete_messages(index, paths) == 0  # nothing pending: a no-op


@pytest.mark.usefixtures("bulk")
def test_the_cli_path_lists_without_waiting_and_completes_before_searching(
    tmp_path: Path,
) -> None:
    paths = LoomPaths.from_env()
    ids = write_threads(paths, THREADS)
    scanned: list[tuple[int, int]] = []
    completing: list[tuple[int, int]] = []
    rows = answer_from_index(
        lambda index: index.list(THREADS + 10),
        print,
        lambda *done: scanned.append(done),
        search_progress=lambda *done: completing.append(done),
    )
    assert len(rows) == THREADS and scanned[-1] == (THREADS, THREADS) and completing == []
    hits = answer_from_index(
        lambda index: index.search("cache retry", 50),
        print,
        lambda *done: scanned.append(done),
        search_progress=lambda *done: completing.append(done),
        search=True,
    )
    assert completing[0] == (0, THREADS) and completing[-1] == (THREADS, THREADS)
    full = one_by_one(paths, ids, tmp_path / "full.db")
    assert len(hits) == 50 and hits == full.search("cache retry", 50)
    index, _ = open_index(paths)
    assert not messages_pending(index) and found(index) == found(full)


@pytest.mark.usefixtures("bulk")
def test_the_resume_picker_shows_first_words_before_the_message_rows_exist(
    tmp_path: Path,
) -> None:
    paths = LoomPaths.from_env()
    ids = write_threads(paths, THREADS)
    picked = recent_threads(None, limit=30, paths=paths)
    index, _ = open_index(paths)
    assert messages_pending(index) and _message_rows(index) == 0  # it did not wait
    full = one_by_one(paths, ids, tmp_path / "full.db")
    expected = [(row["id"], row["first_words"]) for row in full.recent(None, 30)]
    assert [(thread.id, thread.first_words) for thread in picked] == expected
    assert all(words for _id, words in expected)


@pytest.mark.usefixtures("bulk")
def test_a_save_after_its_file_was_read_for_the_completion_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = LoomPaths.from_env()
    ids = write_threads(paths, THREADS)
    store = LocalThreadStore(paths)
    store.list()
    other = LocalThreadStore(paths)
    read_first: list[str] = []
    plain_grouped = index_messages.grouped

    def save_after_reading(batches, min_bytes):
        for group in plain_grouped(batches, min_bytes):
            tid = group[-1][0]  # read as it was listed; saved before its rows are written
            thread = other.load(tid)
            assert thread is not None
            thread.metadata.title = "renamed quokka"  # as many messages as it read
            thread.touch()
            other.save(thread)
            read_first.append(tid)
            yield group

    monkeypatch.setattr(index_messages, "grouped", save_after_reading)
    index = store.index
    completed = complete_messages(index, paths)
    other.close()
    assert len(read_first) >= 2 and completed == THREADS - len(read_first)
    assert not messages_pending(index)
    for tid in read_first:  # the save's rows only: the rows of the file read were not added
        assert index.conn.execute(
            "SELECT title, indexed_messages = message_count FROM thread_index_threads WHERE id = ?",
            (tid,),
        ).fetchone() == ("renamed quokka", 1)
    assert {hit.summary.id for hit in store.search("quokka", 50)} == set(read_first)
    full = one_by_one(paths, ids, tmp_path / "full.db")
    assert contents(index)[2] == contents(full)[2]
    store.close()


@pytest.mark.usefixtures("bulk")
def test_the_stores_own_saves_go_on_while_its_first_search_writes_the_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The completion leaves the store's lock between groups: a save of this same store
    (another session of a `loom web`) waits for one group at most, not for the whole
    completion (a minute at 100k threads)."""
    import threading

    paths = LoomPaths.from_env()
    ids = write_threads(paths, THREADS)
    store = LocalThreadStore(paths)
    store.list()
    later = ids[-3]
    saved: list[bool] = []
    real_grouped = index_messages.grouped

    def save_from_another_thread() -> None:
        save_with_note(store, later, "a narwhal note saved during the first search")
        saved.append(True)

    def groups_with_a_save_between(*args: object, **kwargs: object):
        for number, group in enumerate(real_grouped(*args, **kwargs)):  # type: ignore[arg-type]
            yield group
            if number == 0:  # after the first group was written, before the next
                saver = threading.Thread(target=save_from_another_thread)
                saver.start()
                saver.join(timeout=60)
                assert saved, "the save waited for the whole completion"

    monkeypatch.setattr(index_messages, "grouped", groups_with_a_save_between)
    assert [hit.summary.id for hit in store.search("narwhal")] == [later]
    assert not messages_pending(store.index)
    full = one_by_one(paths, ids, tmp_path / "full.db")
    assert contents(store.index)[2] == contents(full)[2]  # every message row, once
    store.close()
