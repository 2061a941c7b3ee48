"""Engine and sessions for SQLite (embedded default) and PostgreSQL."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine


def make_engine(url: str, **kwargs: Any) -> AsyncEngine:
    if url.startswith("sqlite"):
        _ensure_sqlite_parent(url)
        engine = create_async_engine(url, connect_args={"timeout": 30}, **kwargs)
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return engine
    kwargs.setdefault("pool_size", 10)
    kwargs.setdefault("max_overflow", 10)
    # No pre-ping (a round trip per request): a connection the database dropped fails
    # once, is discarded, and the client gets 503 and retries.
    kwargs.setdefault("pool_recycle", 1800)
    return create_async_engine(url, **kwargs)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # WAL lets several server processes read while one writes; busy_timeout waits for
    # the write lock instead of failing.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _ensure_sqlite_parent(url: str) -> None:
    from pathlib import Path

    path = url.split(":///", 1)[-1] if ":///" in url else ""
    if path and path != ":memory:" and not path.startswith("file:"):
        Path(path.split("?", 1)[0]).parent.mkdir(parents=True, exist_ok=True)


def session_factory(engine: AsyncEngine) -> async_sessionmaker:
    return async_sessionmaker(engine, expire_on_commit=False)


def is_postgres(engine: AsyncEngine) -> bool:
    return engine.dialect.name == "postgresql"
