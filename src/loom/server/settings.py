"""Server settings: where the database is and how large a request may be."""

from __future__ import annotations

import os
from dataclasses import dataclass

DATABASE_URL_ENV = "LOOM_DATABASE_URL"
MAX_BODY_ENV = "LOOM_SERVER_MAX_BODY_BYTES"
DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class ServerSettings:
    database_url: str
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES

    @classmethod
    def from_env(cls, default_database_url: str | None = None) -> ServerSettings:
        url = os.environ.get(DATABASE_URL_ENV) or default_database_url
        if not url:
            raise ValueError(
                f"no database configured: set {DATABASE_URL_ENV} "
                "(e.g. postgresql+asyncpg://user@host/db or sqlite+aiosqlite:///path.db)"
            )
        url = normalize_url(url)
        if not url.startswith(("sqlite+aiosqlite://", "postgresql+asyncpg://")):
            raise ValueError(
                f"{DATABASE_URL_ENV}={redact_url(url)} is not supported; use "
                "postgresql+asyncpg://user@host/db or sqlite+aiosqlite:///path.db"
            )
        raw = os.environ.get(MAX_BODY_ENV)
        limit = int(raw) if raw and raw.isdigit() else DEFAULT_MAX_BODY_BYTES
        return cls(database_url=url, max_body_bytes=limit)


def normalize_url(url: str) -> str:
    """Accept the plain driver names people type and use the async drivers we ship."""
    for plain, async_name in (
        ("postgresql://", "postgresql+asyncpg://"),
        ("postgres://", "postgresql+asyncpg://"),
        ("sqlite://", "sqlite+aiosqlite://"),
    ):
        if url.startswith(plain):
            return async_name + url[len(plain) :]
    return url


def redact_url(url: str) -> str:
    """The URL without a password, for messages."""
    if "@" not in url or "://" not in url:
        return url
    scheme, rest = url.split("://", 1)
    creds, host = rest.rsplit("@", 1)
    user = creds.split(":", 1)[0]
    return f"{scheme}://{user}@{host}"
