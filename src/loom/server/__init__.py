"""The Loom sync server: FastAPI app, SQLAlchemy models, Alembic migrations, auth, search.

It imports only `loom.core` and its own modules (never `loom.session` or `loom.store`),
keeps no state between requests in its process, and runs on SQLite (embedded default)
or PostgreSQL (`LOOM_DATABASE_URL=postgresql+asyncpg://...`).
"""

from __future__ import annotations

from loom.server.app import create_app
from loom.server.settings import ServerSettings

__all__ = ["ServerSettings", "create_app"]
