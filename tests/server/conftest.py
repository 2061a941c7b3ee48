"""Server tests run on both databases: SQLite and PostgreSQL (a fresh database per run)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.support.server import add_user, migrate, postgres_database, unique


@pytest.fixture(scope="session")
def sqlite_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("server-db") / "server.db"
    return migrate(f"sqlite+aiosqlite:///{path}")


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    with postgres_database() as url:
        yield migrate(url)


@dataclass
class Backend:
    name: str
    url: str
    client: TestClient

    def user(self, org: str | None = None, *, support: bool = False) -> tuple[str, dict[str, str]]:
        """A new user; returns (org, auth headers)."""
        org = org or unique("org")
        token = add_user(self.url, unique("user"), org, support=support)
        return org, {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    from loom.server import ServerSettings, create_app

    url = request.getfixturevalue(f"{request.param}_url")
    app = create_app(ServerSettings(database_url=url, max_body_bytes=256 * 1024))
    with TestClient(app) as client:
        yield Backend(request.param, url, client)


@pytest.fixture
def tmp_home(tmp_path: Path) -> Path:
    return tmp_path
