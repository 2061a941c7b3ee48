"""Initial schema: organizations, users, API tokens, threads, full-text search.

Revision ID: 0001_initial
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001_initial"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "orgs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("created_at", sa.String(32), nullable=False),
    )
    op.create_table(
        "users",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("org_id", sa.Integer, sa.ForeignKey("orgs.id"), nullable=False),
        sa.Column("is_support", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("created_at", sa.String(32), nullable=False),
    )
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("prefix", sa.String(16), nullable=False),
        sa.Column("created_at", sa.String(32), nullable=False),
        sa.Column("revoked_at", sa.String(32), nullable=True),
    )
    op.create_table(
        "threads",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("owner_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("org_id", sa.Integer, sa.ForeignKey("orgs.id"), nullable=False),
        sa.Column("version", sa.BigInteger, nullable=False),
        sa.Column("title", sa.Text, nullable=False, server_default=""),
        sa.Column("agent_state_kind", sa.String(40), nullable=False),
        sa.Column("message_count", sa.Integer, nullable=False),
        sa.Column("history_hash", sa.String(64), nullable=False),
        sa.Column("created_at", sa.String(32), nullable=False),
        sa.Column("updated_at", sa.String(32), nullable=False),
        sa.Column("last_activity_at", sa.String(32), nullable=False),
        sa.Column("git_branch", sa.Text, nullable=True),
        sa.Column("git_remote_url", sa.Text, nullable=True),
        sa.Column("visibility", sa.String(16), nullable=False),
        sa.Column("is_shared_with_support", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("share_token", sa.String(64), nullable=False, unique=True),
        sa.Column("data", sa.Text, nullable=False),
        sa.Column("search_text", sa.Text, nullable=False),
        sa.Column("server_updated_at", sa.String(32), nullable=False),
        sa.Column("deleted_at", sa.String(32), nullable=True),
    )
    op.create_index("ix_threads_activity", "threads", ["last_activity_at", "id"])
    op.create_index("ix_threads_owner_activity", "threads", ["owner_id", "last_activity_at", "id"])
    op.create_index("ix_threads_org_activity", "threads", ["org_id", "last_activity_at", "id"])
    op.create_index("ix_threads_git_branch", "threads", ["git_branch"])
    op.create_index("ix_threads_git_remote", "threads", ["git_remote_url"])

    if op.get_bind().dialect.name == "postgresql":
        # A stored tsvector kept by PostgreSQL itself, indexed with GIN.
        op.execute(
            "ALTER TABLE threads ADD COLUMN search_vector tsvector GENERATED ALWAYS AS ("
            "setweight(to_tsvector('english', coalesce(title, '')), 'A') || "
            "setweight(to_tsvector('english', search_text), 'B')) STORED"
        )
        op.execute("CREATE INDEX ix_threads_search ON threads USING gin (search_vector)")
    else:
        # FTS5 over the threads table (external content), kept in step by triggers.
        # It is keyed by the implicit rowid, which VACUUM may renumber: after a VACUUM
        # run `INSERT INTO threads_fts(threads_fts) VALUES('rebuild')`.
        op.execute(
            "CREATE VIRTUAL TABLE threads_fts USING fts5("
            "title, search_text, content='threads', content_rowid='rowid', "
            "tokenize='porter unicode61')"
        )
        op.execute(
            "CREATE TRIGGER threads_fts_ai AFTER INSERT ON threads BEGIN "
            "INSERT INTO threads_fts(rowid, title, search_text) "
            "VALUES (new.rowid, new.title, new.search_text); END"
        )
        op.execute(
            "CREATE TRIGGER threads_fts_ad AFTER DELETE ON threads BEGIN "
            "INSERT INTO threads_fts(threads_fts, rowid, title, search_text) "
            "VALUES ('delete', old.rowid, old.title, old.search_text); END"
        )
        op.execute(
            "CREATE TRIGGER threads_fts_au AFTER UPDATE OF title, search_text ON threads BEGIN "
            "INSERT INTO threads_fts(threads_fts, rowid, title, search_text) "
            "VALUES ('delete', old.rowid, old.title, old.search_text); "
            "INSERT INTO threads_fts(rowid, title, search_text) "
            "VALUES (new.rowid, new.title, new.search_text); END"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        for name in ("threads_fts_ai", "threads_fts_ad", "threads_fts_au"):
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
        op.execute("DROP TABLE IF EXISTS threads_fts")
    op.drop_table("threads")
    op.drop_table("api_tokens")
    op.drop_table("users")
    op.drop_table("orgs")
