"""Alembic environment: runs migrations on the async engine for the configured URL."""

from __future__ import annotations

import asyncio

from alembic import context

from loom.server.db import make_engine
from loom.server.models import Base

target_metadata = Base.metadata


def _do_run(connection) -> None:  # type: ignore[no-untyped-def]
    context.configure(connection=connection, target_metadata=target_metadata)
    with context.begin_transaction():
        context.run_migrations()


async def _run_online() -> None:
    url = context.config.get_main_option("sqlalchemy.url")
    assert url
    engine = make_engine(url)
    try:
        async with engine.connect() as connection:
            await connection.run_sync(_do_run)
            await connection.commit()
    finally:
        await engine.dispose()


if context.is_offline_mode():
    context.configure(
        url=context.config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
    )
    with context.begin_transaction():
        context.run_migrations()
else:
    asyncio.run(_run_online())
