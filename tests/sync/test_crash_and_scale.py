"""Faults: the server is killed in the middle of a sync; several server processes share
one database. Both on SQLite and on PostgreSQL."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from loom.core.messages import UserMessage
from tests.support.server import LiveServer, add_user, migrate, postgres_database
from tests.support.sync import make_machine
from tests.support.threads import thread_with


def all_mine(url: str, token: str) -> list[dict]:
    headers = {"Authorization": f"Bearer {token}"}
    items: list[dict] = []
    cursor = None
    while True:
        params = {"limit": 200, "mine": "true", **({"cursor": cursor} if cursor else {})}
        page = httpx.get(f"{url}/api/threads", params=params, headers=headers, timeout=10).json()
        items.extend(page["threads"])
        cursor = page["next_cursor"]
        if not cursor:
            return items


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, migrated server database of each kind."""
    if request.param == "postgres":
        with postgres_database() as url:
            yield migrate(url)
    else:
        yield migrate(f"sqlite+aiosqlite:///{tmp_path / 'server.db'}")


def test_server_killed_mid_sync_of_200_threads(database: str, tmp_path: Path, machines) -> None:
    db = database
    token = add_user(db, "crash-user", "crash-org")
    server = LiveServer(db, tmp_path).start()
    try:
        machine = make_machine(tmp_path / "client", server.url, token, max_backoff=0.3)
        machines.append(machine)
        threads = [thread_with(f"crash test {i}", "reply") for i in range(200)]
        for thread in threads:
            machine.store.save(thread)
        assert len(machine.store.queue) == 200

        machine.store.start()  # the background thread starts pushing
        deadline = time.monotonic() + 60
        arrived = 0
        while arrived < 20 and time.monotonic() < deadline:
            arrived = len(all_mine(server.url, token))
        server.kill()
        assert 0 < arrived < 200, "the kill did not land mid-sync"

        time.sleep(0.5)  # pushes fail meanwhile and are recorded
        entries = machine.store.queue.entries()
        assert any(e.last_error for e in entries)
        server.start()
        assert machine.store.wait_idle(timeout=60), machine.store.status()

        on_server = all_mine(server.url, token)
        ids = [item["id"] for item in on_server]
        assert len(ids) == len(set(ids)) == 200  # every thread, none twice
        assert set(ids) == {t.id for t in threads}
        assert all(item["version"] == threads[0].version for item in on_server)
        assert len(machine.store.queue) == 0
    finally:
        server.stop()


def test_two_server_processes_on_one_database(database: str, tmp_path: Path, machines) -> None:
    db = database
    token = add_user(db, "multi-user", "multi-org")
    first = LiveServer(db, tmp_path).start()
    second = LiveServer(db, tmp_path).start()
    try:
        a = make_machine(tmp_path / "a", first.url, token)
        b = make_machine(tmp_path / "b", second.url, token)
        machines.extend([a, b])
        thread = thread_with("written through the first server")
        a.store.save_and_sync(thread)
        assert b.store.pull().pulled == 1  # read through the second
        ours = b.store.load(thread.id)
        assert ours is not None
        ours.append(UserMessage(content="via the second server"))
        ours.touch()
        b.store.save_and_sync(ours)
        stale = a.store.load(thread.id)
        assert stale is not None
        stale.append(UserMessage(content="via the first server"))
        stale.touch()
        a.store.save_and_sync(stale)  # 409 from the first server, merged, accepted
        assert 409 in a.transport.statuses
        final = httpx.get(
            f"{second.url}/api/threads/{thread.id}", headers={"Authorization": f"Bearer {token}"}
        ).json()
        contents = [m["content"] for m in final["conversation"]["messages"]]
        assert contents == [
            "written through the first server",
            "via the second server",
            "via the first server",
        ]
    finally:
        first.stop()
        second.stop()
