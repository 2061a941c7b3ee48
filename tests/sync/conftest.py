"""Sync tests: the client against a real `loom server` process on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.server import LiveServer, migrate
from tests.support.sync import Machine, Server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("sync-server")
    url = migrate(f"sqlite+aiosqlite:///{home / 'server.db'}")
    live = LiveServer(url, home).start()
    try:
        yield Server(live, url)
    finally:
        live.stop()


@pytest.fixture
def machines(tmp_path: Path) -> Iterator[list[Machine]]:
    made: list[Machine] = []
    yield made
    for machine in made:
        machine.store.close()
