"""SyncingThreadStore against a real server: background push, offline queue, privacy,
conflicts between two machines."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx
import pytest

from loom.core.messages import UserMessage
from loom.store.pending import PendingSyncQueue
from loom.store.sync_client import SyncUnavailable
from tests.support.server import free_port
from tests.support.sync import make_machine
from tests.support.threads import stored, thread_with


def server_copy(server, token: str, thread_id: str) -> dict | None:
    response = httpx.get(
        f"{server.url}/api/threads/{thread_id}", headers={"Authorization": f"Bearer {token}"}
    )
    return response.json() if response.status_code == 200 else None


def test_save_queues_durably_and_the_background_thread_pushes(
    server,
    tmp_path: Path,
    machines,
) -> None:
    token = server.token()
    machine = make_machine(tmp_path, server.url, token, background=True)
    machines.append(machine)
    thread = thread_with("background push please")
    machine.store.save(thread)
    assert machine.store.load(thread.id) is not None  # local first
    assert machine.store.wait_idle(timeout=20)
    copy = server_copy(server, token, thread.id)
    assert copy is not None and copy["version"] == thread.version
    assert machine.store.acked.get(thread.id) == thread.version


def test_private_threads_never_produce_a_request(server, tmp_path: Path, machines) -> None:
    machine = make_machine(tmp_path, server.url, server.token())
    machines.append(machine)
    secret = thread_with("my secret", is_private=True)
    machine.store.save(secret)
    machine.store.save_and_sync(secret)
    machine.store.delete(secret.id)
    machine.store.save(secret)
    # Even a queue entry written by hand (or left from before it turned private) is dropped.
    PendingSyncQueue(machine.paths.pending_sync_file).enqueue(secret.id, "Upsert")  # type: ignore[arg-type]
    report = machine.store.drain()
    assert report.pushed == 1  # the entry is settled without sending anything
    assert machine.transport.requests == []
    assert len(machine.store.queue) == 0


def test_offline_saves_wait_in_the_queue_and_arrive_later(tmp_path: Path, server, machines) -> None:
    token = server.token()
    down = make_machine(tmp_path, f"http://127.0.0.1:{free_port()}", token)
    machines.append(down)
    threads = [thread_with(f"offline {i}") for i in range(3)]
    for thread in threads:
        down.store.save(thread)
    report = down.store.drain()
    assert report.unavailable and "cannot reach" in report.unavailable
    entries = PendingSyncQueue(down.paths.pending_sync_file).entries()
    assert {e.thread_id for e in entries} == {t.id for t in threads}
    failed = [e for e in entries if e.retry_count]
    assert failed and failed[0].last_error and failed[0].failed_at
    with pytest.raises(SyncUnavailable):
        down.store.save_and_sync(threads[0])

    # The same machine (same files) later reaches the server: everything arrives.
    up = make_machine(tmp_path, server.url, token)
    machines.append(up)
    up.store.max_backoff = 0  # no backoff wait in this test
    _drain_until_empty(up)
    assert all(server_copy(server, token, t.id) for t in threads)
    assert len(up.store.queue) == 0


def _drain_until_empty(machine, rounds: int = 20):
    import time

    report = None
    for _ in range(rounds):
        report = machine.store.drain()
        if not machine.store.queue.entries():
            return report
        time.sleep(0.3)
    raise AssertionError(f"queue did not drain: {machine.store.status()}")


def test_save_and_sync_blocks_until_the_server_has_it(server, tmp_path: Path, machines) -> None:
    token = server.token()
    machine = make_machine(tmp_path, server.url, token)
    machines.append(machine)
    thread = thread_with("share me now")
    machine.store.save_and_sync(thread)
    copy = server_copy(server, token, thread.id)
    assert copy is not None and copy["version"] == thread.version
    assert len(machine.store.queue) == 0


def two_machines(server, root: Path, machines):
    """Two machines of one user (same token), each with its own files."""
    token = server.token()
    a = make_machine(root / "a", server.url, token)
    b = make_machine(root / "b", server.url, token)
    machines.extend([a, b])
    return token, a, b


def test_two_machines_edit_one_thread_no_message_is_lost(
    server,
    tmp_path: Path,
    machines,
) -> None:
    token, a, b = two_machines(server, tmp_path, machines)
    thread = thread_with("shared start")
    a.store.save_and_sync(thread)
    b_copy = stored(a.store, thread.id).model_copy(deep=True)
    b.store.local.save(b_copy)
    b.store.acked.update({thread.id: thread.version})

    def edit(machine, text: str, barrier: threading.Barrier) -> None:
        mine = machine.store.load(thread.id)
        mine.append(UserMessage(content=text))
        mine.touch()
        barrier.wait()
        machine.store.save_and_sync(mine)

    barrier = threading.Barrier(2)
    workers = [
        threading.Thread(target=edit, args=(a, "from laptop A", barrier)),
        threading.Thread(target=edit, args=(b, "from laptop B", barrier)),
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)

    conflicts = a.transport.statuses.count(409) + b.transport.statuses.count(409)
    assert conflicts == 1
    final = server_copy(server, token, thread.id)
    assert final is not None
    contents = [m["content"] for m in final["conversation"]["messages"]]
    assert contents[0] == "shared start"
    assert sorted(contents[1:]) == ["from laptop A", "from laptop B"]
    loser = a if a.transport.statuses.count(409) else b
    assert [n.kind for n in loser.notices] == ["conflict"]
    assert "two machines" in loser.notices[0].message
    event = loser.notices[0].as_event("session-1")
    assert event.type == "sync_error" and event.thread_id == thread.id
    # The loser's local file has the merged history too.
    assert len(stored(loser.store, thread.id).messages) == 3


def test_a_stale_session_copy_cannot_drop_merged_messages(
    server,
    tmp_path: Path,
    machines,
) -> None:
    token, a, b = two_machines(server, tmp_path, machines)
    thread = thread_with("base")
    a.store.save_and_sync(thread)
    b.store.pull()
    remote_edit = b.store.load(thread.id)
    assert remote_edit is not None
    remote_edit.append(UserMessage(content="from B"))
    remote_edit.touch()
    b.store.save_and_sync(remote_edit)
    # A's session keeps its in-memory copy and saves it twice: the first push merges,
    # the second (still without B's message) must not drop it either.
    session_copy = a.store.load(thread.id)
    for text in ("A one", "A two"):
        assert session_copy is not None
        session_copy.append(UserMessage(content=text))
        session_copy.touch()
        a.store.save_and_sync(session_copy)
    final = server_copy(server, token, thread.id)
    assert final is not None
    contents = [m["content"] for m in final["conversation"]["messages"]]
    assert contents == ["base", "from B", "A one", "A two"]


def test_pull_brings_in_changes_from_another_machine(
    server,
    tmp_path: Path,
    machines,
) -> None:
    _, a, b = two_machines(server, tmp_path, machines)
    thread = thread_with("written on A")
    a.store.save_and_sync(thread)
    report = b.store.pull()
    assert report.pulled == 1
    assert stored(b.store, thread.id).messages[0].content == "written on A"
    assert b.store.pull().pulled == 0  # nothing new the second time


def test_delete_reaches_the_server(server, tmp_path: Path, machines) -> None:
    token = server.token()
    machine = make_machine(tmp_path, server.url, token)
    machines.append(machine)
    thread = thread_with("short lived")
    machine.store.save_and_sync(thread)
    machine.store.delete(thread.id)
    machine.store.drain()
    assert server_copy(server, token, thread.id) is None
    machine.store.restore(thread.id)
    machine.store.drain()
    assert server_copy(server, token, thread.id) is not None


def test_a_thread_made_private_is_taken_off_the_server(
    server,
    tmp_path: Path,
    machines,
) -> None:
    token = server.token()
    machine = make_machine(tmp_path, server.url, token)
    machines.append(machine)
    thread = thread_with("was shared")
    machine.store.save_and_sync(thread)
    machine.transport.requests.clear()
    thread.is_private = True
    thread.touch()
    machine.store.save_and_sync(thread)
    assert [r.method for r in machine.transport.requests] == ["DELETE"]
    assert server_copy(server, token, thread.id) is None
    thread.touch()
    machine.store.save(thread)  # private from now on: nothing more is sent
    machine.store.drain()
    assert [r.method for r in machine.transport.requests] == ["DELETE"]


def test_replaying_a_push_the_server_already_has_changes_nothing(
    server,
    tmp_path: Path,
    machines,
) -> None:
    token = server.token()
    machine = make_machine(tmp_path, server.url, token)
    machines.append(machine)
    thread = thread_with("pushed, then the client crashed before noting it")
    machine.store.save(thread)
    machine.store.client.upsert(thread, 0)  # the server has it; the queue still does too
    report = machine.store.drain()
    assert report.pushed == 1 and not report.notices
    assert machine.transport.statuses == [201, 409]  # the replay met the same copy
    assert machine.store.acked.get(thread.id) == thread.version
    copy = server_copy(server, token, thread.id)
    assert copy is not None and copy["version"] == thread.version
    assert len(machine.store.queue) == 0
