"""A private thread never syncs unless the person changes it through Loom: flipping
`is_private` in its file and queueing it in pending.json uploads nothing, because
sync asks Loom's own record (data/private-threads.txt) first (issue 20, route 3)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from typer.testing import CliRunner

from loom.cli.app import build_app
from loom.paths import LoomPaths
from loom.store.factory import open_thread_store
from loom.store.pending import PendingSyncQueue, SyncOperation
from tests.support.sync import make_machine
from tests.support.threads import thread_with


def flip_to_shared(thread_file: Path) -> None:
    """What a command with write access to the file would do."""
    data = json.loads(thread_file.read_text())
    data.update(is_private=False, visibility="organization")
    thread_file.write_text(json.dumps(data, indent=2))


def on_server(server, token: str, thread_id: str) -> bool:
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.get(f"{server.url}/api/threads/{thread_id}", headers=headers).status_code == 200


def test_loom_sync_never_uploads_a_private_thread_whose_file_was_flipped(server) -> None:
    runner = CliRunner()
    token = server.token()
    done = runner.invoke(build_app(), ["login", "--server", server.url, "--token", token])
    assert done.exit_code == 0, done.output
    paths = LoomPaths.from_env()
    store = open_thread_store(paths, background=False)
    secret = thread_with("my private notes", is_private=True)
    store.save(secret)
    shared = thread_with("an ordinary thread")
    store.save(shared)
    store.close()
    assert secret.id in paths.private_threads_file.read_text()

    flip_to_shared(paths.threads_dir / f"{secret.id}.json")
    PendingSyncQueue(paths.pending_sync_file).enqueue(secret.id, SyncOperation.UPSERT)
    done = runner.invoke(build_app(), ["sync", "--json"])
    assert done.exit_code == 0, done.output
    assert on_server(server, token, shared.id)  # sync did run
    assert not on_server(server, token, secret.id)
    listed = runner.invoke(build_app(), ["list", "--json"])
    rows = {row["id"]: row for row in json.loads(listed.output)}
    assert rows[secret.id]["is_private"] is True  # the record wins where it is shown too


def test_the_drain_sends_no_request_for_a_flipped_private_thread(
    server, tmp_path: Path, machines
) -> None:
    machine = make_machine(tmp_path, server.url, server.token())
    machines.append(machine)
    secret = thread_with("between you and me", is_private=True)
    machine.store.save(secret)
    flip_to_shared(machine.paths.threads_dir / f"{secret.id}.json")
    loaded = machine.store.load(secret.id)
    assert loaded is not None and loaded.is_private and loaded.visibility == "private"
    PendingSyncQueue(machine.paths.pending_sync_file).enqueue(secret.id, SyncOperation.UPSERT)
    machine.store.drain()
    loaded.is_private = False  # even a copy in memory that says otherwise
    loaded.touch()
    machine.store.save(loaded)
    machine.store.drain()
    assert machine.transport.requests == []
    saved = json.loads((machine.paths.threads_dir / f"{secret.id}.json").read_text())
    assert saved["is_private"] is True and saved["visibility"] == "private"


def test_an_unreadable_record_uploads_nothing_and_keeps_the_queue(
    server, tmp_path: Path, machines
) -> None:
    machine = make_machine(tmp_path, server.url, server.token())
    machines.append(machine)
    thread = thread_with("not private at all")
    machine.store.save(thread)
    machine.paths.private_threads_file.unlink(missing_ok=True)
    machine.paths.private_threads_file.mkdir()  # reading it fails (even as root)
    report = machine.store.drain()
    assert machine.transport.requests == []
    assert report.failed == 1 and "cannot be read" in report.notices[0].message
    assert [e.thread_id for e in machine.store.queue.entries()] == [thread.id]
    machine.paths.private_threads_file.rmdir()
    machine.store.save_and_sync(thread)  # readable again: it goes
    assert [r.method for r in machine.transport.requests] == ["PUT"]
