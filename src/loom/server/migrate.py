"""Schema migrations through Alembic (scripts in loom/server/migrations)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from loom.core.errors import LoomError
from loom.server.db import make_engine
from loom.server.settings import redact_url


class DatabaseNotMigrated(LoomError, RuntimeError):
    """The database schema is older than this server (or missing)."""


def alembic_config(url: str) -> Any:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", "loom.server:migrations")
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def head_revision(url: str) -> str:
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config(url)).get_current_head()
    assert head is not None
    return head


def upgrade(url: str, revision: str = "head") -> None:
    """Apply migrations up to `revision`. Safe to call from inside a running event loop."""
    from alembic import command

    _run_outside_loop(lambda: command.upgrade(alembic_config(url), revision))


async def current_revision(engine: AsyncEngine) -> str | None:
    from sqlalchemy import inspect, text

    async with engine.connect() as conn:
        has_table = await conn.run_sync(lambda c: inspect(c).has_table("alembic_version"))
        if not has_table:
            return None
        row = (await conn.execute(text("SELECT version_num FROM alembic_version"))).first()
        return row[0] if row else None


async def check_migrated(engine: AsyncEngine, url: str) -> None:
    """Raise DatabaseNotMigrated with a message that says what to run."""
    current = await current_revision(engine)
    head = head_revision(url)
    if current != head:
        state = "has no Loom schema" if current is None else f"is at revision {current}"
        raise DatabaseNotMigrated(
            f"the database {redact_url(url)} {state}; this server needs revision {head}. "
            "Run `loom server migrate` (same LOOM_DATABASE_URL) and start the server again."
        )


def check_migrated_sync(url: str) -> None:
    async def run() -> None:
        engine = make_engine(url)
        try:
            await check_migrated(engine, url)
        finally:
            await engine.dispose()

    _run_outside_loop(lambda: asyncio.run(run()))


def _run_outside_loop(fn: Any) -> None:
    """Alembic's async env.py calls asyncio.run: give it a thread when a loop is running."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        fn()
        return
    errors: list[BaseException] = []

    def target() -> None:
        try:
            fn()
        except BaseException as exc:
            errors.append(exc)

    worker = threading.Thread(target=target)
    worker.start()
    worker.join()
    if errors:
        raise errors[0]
