"""Alembic migrations and the `loom server` admin commands (through the real CLI)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from loom.cli.app import build_app
from loom.server.migrate import DatabaseNotMigrated, check_migrated, head_revision
from tests.support.server import postgres_database

runner = CliRunner()


def loom(*args: str) -> tuple[int, str]:
    result = runner.invoke(build_app(), list(args))
    return result.exit_code, result.output


def test_server_refuses_an_unmigrated_database(tmp_path: Path, monkeypatch) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'fresh.db'}"
    monkeypatch.setenv("LOOM_DATABASE_URL", url)
    code, output = loom("server", "--port", "0")
    assert code == 1
    assert "loom server migrate" in output and "no Loom schema" in output

    from fastapi.testclient import TestClient

    from loom.server import ServerSettings, create_app

    with pytest.raises(DatabaseNotMigrated), TestClient(create_app(ServerSettings(url))):
        pass


def test_admin_commands_end_to_end(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("LOOM_DATABASE_URL", raising=False)
    code, output = loom("server", "migrate", "--json")
    assert code == 0, output
    assert json.loads(output)["revision"] == head_revision("sqlite://")
    assert "server.db" in json.loads(output)["database"]  # the default lives in the data dir

    code, output = loom("server", "create-user", "ana", "--org", "acme", "--json")
    assert code == 0 and json.loads(output)["org"] == "acme"
    code, output = loom("server", "create-user", "ana", "--org", "acme")
    assert code == 1 and "already exists" in output

    code, output = loom("server", "create-token", "ana", "--json")
    token = json.loads(output)["token"]
    assert code == 0 and token.startswith("loom_")
    code, output = loom("server", "create-token", "nobody")
    assert code == 1 and "create-user" in output

    code, output = loom("server", "revoke-token", token, "--json")
    assert code == 0 and json.loads(output)["revoked_at"]
    code, output = loom("server", "revoke-token", "999", "--json")
    assert code == 1 and "error" in json.loads(output)


def test_migrations_upgrade_and_downgrade_on_postgres() -> None:
    from loom.server.db import make_engine
    from loom.server.migrate import alembic_config, upgrade

    with postgres_database() as url:
        upgrade(url)

        async def check() -> None:
            engine = make_engine(url)
            try:
                await check_migrated(engine, url)
            finally:
                await engine.dispose()

        asyncio.run(check())
        from alembic import command

        command.downgrade(alembic_config(url), "base")
        with pytest.raises(DatabaseNotMigrated):
            asyncio.run(check())


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("mysql://somewhere/db", "is not supported"),
        ("postgresql://postgres@127.0.0.1:5432/loom_no_such_db", "does not exist"),
    ],
)
def test_bad_database_urls_get_a_clear_message(monkeypatch, url: str, expected: str) -> None:
    monkeypatch.setenv("LOOM_DATABASE_URL", url)
    for args in (
        ["server", "migrate"],
        ["server", "--port", "0"],
        ["server", "create-user", "a", "--org", "b"],
    ):
        code, output = loom(*args)
        assert code == 1, output
        assert expected in output and "Traceback" not in output
