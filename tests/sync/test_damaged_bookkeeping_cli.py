"""Garbage in pending.json / acked.json, and threads made before `loom login`, through
the `loom` command against a real sync server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loom.paths import LoomPaths
from loom.store.factory import acked_versions_file
from loom.store.local import LocalThreadStore
from tests.support.loom_cli import Done, loom_in_process
from tests.support.threads import thread_with


def loom(*args: str) -> Done:
    """`loom ARGS` in this process (a traceback would fail the test right there)."""
    result = loom_in_process(list(args), Path.cwd(), None)
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    return result


def _login(server, *extra: str) -> Done:
    result = loom("login", "--server", server.url, "--token", server.token(), *extra)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def _save(n: int, prefix: str) -> list[str]:
    store = LocalThreadStore(LoomPaths.from_env())
    ids = []
    for i in range(n):
        thread = thread_with(f"{prefix} {i}", "an answer")
        store.save(thread)
        ids.append(thread.id)
    store.close()
    return ids


def _server_ids(server) -> set[str]:
    import httpx

    token = json.loads((LoomPaths.from_env().config / "credentials.json").read_text())["token"]
    page = httpx.get(
        f"{server.url}/api/threads",
        params={"limit": 200, "mine": "true"},
        headers={"Authorization": f"Bearer {token}"},
    ).json()
    return {t["id"] for t in page["threads"]}


def _queue_ids_later(ids: list[str]) -> list[str]:
    """Threads saved after login (so they count as meant for the server) and queued."""
    from loom.store.factory import open_thread_store

    store = open_thread_store(LoomPaths.from_env(), background=False)
    for thread_id in ids:
        thread = store.load(thread_id)
        thread.touch()
        store.save(thread)
    store.close()
    return ids


def _garbage(ids: list[str]) -> dict[str, bytes]:
    good = {
        "next_seq": 9,
        "entries": [{"thread_id": t, "operation": "Upsert", "seq": 1} for t in ids],
    }
    text = json.dumps(good)
    return {
        "truncated": text[: len(text) // 2].encode(),
        "binary": b"\x00\xff" + text.encode() + b"\xfe",
        "array": json.dumps([good]).encode(),
        "entries-not-list": json.dumps({"next_seq": 3, "entries": {"a": ids}}).encode(),
        "wrong-types": json.dumps(
            {
                "next_seq": "many",
                "entries": [
                    {
                        "thread_id": t,
                        "operation": 7,
                        "seq": "x",
                        "retry_count": None,
                        "failed_at": 5,
                    }
                    for t in ids
                ],
            }
        ).encode(),
        "nested": ("[" * 100_000 + json.dumps(ids) + "]" * 100_000).encode(),
        "empty": b"",
        "null": b"null",
    }


GARBAGE_KINDS = sorted(_garbage([]).keys())


@pytest.mark.parametrize("kind", GARBAGE_KINDS)
def test_a_damaged_queue_is_reported_once_and_its_threads_pushed(server, kind: str) -> None:
    _login(server)
    ids = _queue_ids_later(_save(3, f"queued {kind}"))
    pending = LoomPaths.from_env().pending_sync_file
    pending.write_bytes(_garbage(ids)[kind])
    first = loom("sync")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "pending.json was damaged" in first.stderr
    assert list(pending.parent.glob("pending.json.damaged-*"))
    # every queued thread reached the server: read back from the bytes, or re-queued by
    # comparing local threads with what the server acknowledged
    assert set(ids) <= _server_ids(server)
    second = loom("sync")
    assert second.returncode == 0 and "damaged" not in second.stderr  # said once


ACKED_GARBAGE = {
    "not-json": b'{"T-',
    "list": b"[1, 2]",
    "strings": None,  # filled in with the ids
    "negative": None,
}


@pytest.mark.parametrize("kind", sorted(ACKED_GARBAGE))
def test_damaged_acknowledged_versions_never_break_sync(server, kind: str) -> None:
    _login(server)
    ids = _queue_ids_later(_save(2, f"acked {kind}"))
    assert loom("sync").returncode == 0
    acked = acked_versions_file(LoomPaths.from_env())
    bad = ACKED_GARBAGE[kind]
    if kind == "strings":
        bad = json.dumps({t: "seven" for t in ids}).encode()
    elif kind == "negative":
        bad = json.dumps({t: -4 for t in ids} | {"junk": {"x": 1}}).encode()
    acked.write_bytes(bad)
    store = LocalThreadStore(LoomPaths.from_env())
    thread = store.load(ids[0])
    assert thread is not None
    thread.metadata.title = "changed after the damage"
    thread.touch()
    store.save(thread)  # a local change the server has not seen
    store.close()
    result = loom("sync")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "acked.json was damaged" in result.stderr
    assert set(ids) <= _server_ids(server)
    assert loom("sync").returncode == 0


def test_threads_made_before_login_are_counted_and_pushed_on_request(server) -> None:
    before = _save(4, "made offline")
    shown = _login(server)
    assert "4 existing thread(s) made before this login are not on the server" in shown.stdout
    status = loom("sync", "--json")
    assert json.loads(status.stdout)["not_on_server"] == 4
    assert not set(before) & _server_ids(server)
    pushed = loom("sync", "--push-existing")
    assert pushed.returncode == 0 and "queued  4 existing thread(s)" in pushed.stdout
    assert set(before) <= _server_ids(server)
    assert json.loads(loom("sync", "--json").stdout)["not_on_server"] == 0


def test_login_push_existing_queues_them_at_once(server) -> None:
    before = _save(3, "offline too")
    private = thread_with("my private notes")
    private.is_private = True
    store = LocalThreadStore(LoomPaths.from_env())
    store.save(private)
    store.close()
    shown = _login(server, "--push-existing")
    assert "queued 3 existing thread(s)" in shown.stdout
    assert loom("sync").returncode == 0
    on_server = _server_ids(server)
    assert set(before) <= on_server and private.id not in on_server
