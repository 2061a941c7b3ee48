"""SQLAlchemy tables. Alembic migrations (server/migrations) create them; keep both in step.

Threads keep the full thread as JSON (`data`) plus denormalised columns for listing and
access checks, and `search_text` (what full-text search indexes). Deletes are soft.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class Org(Base):
    __tablename__ = "orgs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    created_at: Mapped[str] = mapped_column(String(32))


class User(Base):
    __tablename__ = "users"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("orgs.id"))
    is_support: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[str] = mapped_column(String(32))


class ApiToken(Base):
    __tablename__ = "api_tokens"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)  # sha256 hex
    prefix: Mapped[str] = mapped_column(String(16))  # first characters, to recognise it
    created_at: Mapped[str] = mapped_column(String(32))
    revoked_at: Mapped[str | None] = mapped_column(String(32), nullable=True)


class ThreadRow(Base):
    __tablename__ = "threads"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    org_id: Mapped[int] = mapped_column(ForeignKey("orgs.id"))
    version: Mapped[int] = mapped_column(BigInteger)
    title: Mapped[str] = mapped_column(Text, default="")
    agent_state_kind: Mapped[str] = mapped_column(String(40))
    message_count: Mapped[int] = mapped_column(Integer)
    history_hash: Mapped[str] = mapped_column(String(64))  # see server/history.py
    created_at: Mapped[str] = mapped_column(String(32))
    updated_at: Mapped[str] = mapped_column(String(32))
    # ISO 8601 UTC with milliseconds: sorts as text exactly as in time.
    last_activity_at: Mapped[str] = mapped_column(String(32))
    git_branch: Mapped[str | None] = mapped_column(Text, nullable=True)
    git_remote_url: Mapped[str | None] = mapped_column(Text, nullable=True)
    visibility: Mapped[str] = mapped_column(String(16))
    is_shared_with_support: Mapped[bool] = mapped_column(Boolean, default=False)
    share_token: Mapped[str] = mapped_column(String(64), unique=True)
    data: Mapped[str] = mapped_column(Text)
    search_text: Mapped[str] = mapped_column(Text)
    server_updated_at: Mapped[str] = mapped_column(String(32))
    deleted_at: Mapped[str | None] = mapped_column(String(32), nullable=True)

    __table_args__ = (
        Index("ix_threads_activity", "last_activity_at", "id"),
        Index("ix_threads_owner_activity", "owner_id", "last_activity_at", "id"),
        Index("ix_threads_org_activity", "org_id", "last_activity_at", "id"),
        Index("ix_threads_git_branch", "git_branch"),
        Index("ix_threads_git_remote", "git_remote_url"),
    )


class ThreadSearch(Base):
    """PostgreSQL only (migration 0002): the narrow full-text table kept by a trigger."""

    __tablename__ = "thread_search"
    id: Mapped[str] = mapped_column(String(40), ForeignKey("threads.id"), primary_key=True)
    last_activity_at: Mapped[str] = mapped_column(String(32))
    owner_id: Mapped[int] = mapped_column(Integer)
    org_id: Mapped[int] = mapped_column(Integer)
    visibility: Mapped[str] = mapped_column(String(16))
    is_shared_with_support: Mapped[bool] = mapped_column(Boolean)
    deleted_at: Mapped[str | None] = mapped_column(String(32), nullable=True)
