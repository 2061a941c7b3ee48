"""Truncated, NUL-padded, non-JSON, wrong-type and future-schema files: quarantined
with a reason, listed by doctor, never fatal to list/search."""

from __future__ import annotations

import json

import pytest
from tests.support.threads import make_thread

from loom.core.ids import new_thread_id
from loom.store import doctor
from loom.store.base import ThreadUnreadable
from loom.store.local import LocalThreadStore
from loom.store.quarantine import list_quarantined
from loom.store.serialize import thread_to_bytes


def _good_bytes(thread_id: str) -> bytes:
    thread = make_thread("a good thread")
    thread.id = thread_id
    return thread_to_bytes(thread)


def _wrong_type(tid: str) -> bytes:
    data = json.loads(_good_bytes(tid))
    data["conversation"]["messages"] = "not a list"
    return json.dumps(data).encode()


def _future(tid: str) -> bytes:
    data = json.loads(_good_bytes(tid))
    data["schema_version"] = 99
    return json.dumps(data).encode()


BAD_FILES = {
    "truncated": (lambda tid: _good_bytes(tid)[:150], "not valid JSON"),
    "nul-padded": (lambda tid: _good_bytes(tid)[:200] + b"\x00" * 4096, "NUL bytes"),
    "not-json": (lambda tid: b"<html>hello</html>", "not valid JSON"),
    "empty": (lambda tid: b"", "empty"),
    "array": (lambda tid: b"[1, 2, 3]", "expected a JSON object"),
    "wrong-type": (_wrong_type, "conversation.messages must be of type list"),
    "wrong-version-type": (
        lambda tid: _good_bytes(tid).replace(b'"version": 1', b'"version": "one"'),
        "version must be of type int",
    ),
    "future-schema": (_future, "newer Loom (schema_version 99"),
    "wrong-bool": (
        lambda tid: _good_bytes(tid).replace(b'"is_private": false', b'"is_private": "no"'),
        "is_private has the wrong type",
    ),
    "id-mismatch": (lambda tid: _good_bytes(new_thread_id()), "does not match the file name"),
}


@pytest.mark.parametrize("kind", sorted(BAD_FILES))
def test_bad_file_is_quarantined_and_list_search_go_on(kind: str) -> None:
    make_bytes, reason = BAD_FILES[kind]
    store = LocalThreadStore()
    good = make_thread("healthy neighbour")
    store.save(good)
    bad_id = new_thread_id()
    bad_path = store.path_for(bad_id)
    bad_bytes = make_bytes(bad_id)
    bad_path.write_bytes(bad_bytes)

    report = doctor.diagnose(store.paths)  # doctor reports before anything moves it
    assert [tid for tid, _ in report.bad_files] == [bad_id]
    assert reason in report.bad_files[0][1]

    fresh = LocalThreadStore()
    assert [s.id for s in fresh.list()] == [good.id]
    assert [h.summary.id for h in fresh.search("healthy")] == [good.id]
    assert not bad_path.exists()
    (moved,) = list_quarantined(store.paths.quarantine_dir)
    assert moved.path.name == bad_path.name and reason in moved.reason
    assert moved.path.read_bytes() == bad_bytes  # kept exactly as found
    assert [q.path.name for q in doctor.diagnose(store.paths).quarantined] == [bad_path.name]


def test_load_of_a_bad_file_quarantines_and_says_so() -> None:
    store = LocalThreadStore()
    tid = new_thread_id()
    store.threads_dir.mkdir(parents=True)
    store.path_for(tid).write_bytes(b'{"id": "' + tid.encode() + b'", "version": ')
    with pytest.raises(ThreadUnreadable) as err:
        store.load(tid)
    assert "quarantine" in str(err.value) and "loom doctor" in str(err.value)
    assert not store.path_for(tid).exists()


def test_an_unknown_agent_state_is_caught_by_the_index_and_by_load() -> None:
    store = LocalThreadStore()
    thread = make_thread()
    data = json.loads(thread_to_bytes(thread))
    data["agent_state"]["kind"] = "Dancing"
    store.threads_dir.mkdir(parents=True)
    store.path_for(thread.id).write_text(json.dumps(data))
    assert store.list() == []  # quarantined by the index scan
    store.path_for(thread.id).write_text(json.dumps(data))
    with pytest.raises(ThreadUnreadable, match="not a known state"):
        store.load(thread.id)
    assert not store.path_for(thread.id).exists()


def test_doctor_repair_rebuilds_and_cleans_leftovers() -> None:
    store = LocalThreadStore()
    threads = [make_thread(f"t{i}") for i in range(3)]
    for thread in threads:
        store.save(thread)
    store.index.conn.execute("DELETE FROM thread_index_threads WHERE id = ?", (threads[0].id,))
    (store.threads_dir / f".{threads[1].id}.json.999999999.tmp").write_bytes(b"{")
    report = doctor.diagnose(store.paths)
    assert report.not_indexed == [threads[0].id]
    # A dead process's temp file is removed while looking, and is no problem.
    assert report.cleaned_temp_files == (1, 1) and report.problems == 1
    assert not report.healthy
    repaired = doctor.repair(store.paths)
    assert repaired.healthy, repaired
    assert repaired.threads == repaired.indexed == 3


def test_an_unreadable_entry_is_reported_once_not_retried_on_every_list() -> None:
    import os
    import time

    store = LocalThreadStore()
    store.save(make_thread("fine"))
    odd = store.path_for(new_thread_id())
    odd.mkdir()  # a folder with a thread file's name: cannot be read, cannot be parsed
    old = time.time() - 60
    os.utime(store.threads_dir, (old, old))
    assert [s.title for s in store.list()] == ["fine"]
    assert [p for p, _ in store.last_scan.unreadable] == [odd]
    store.list()
    assert not store.last_scan.scanned  # the marker was recorded despite the odd entry
    assert [tid for tid, _ in doctor.diagnose(store.paths).bad_files] == [odd.name[:-5]]
