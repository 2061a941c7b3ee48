"""PostgreSQL: move full-text search into a narrow `thread_search` table.

Revision ID: 0002_pg_search_table
Revises: 0001_initial
Create Date: 2026-11-22

The tsvector lived in `threads`, whose rows are wide (JSON, text, hashes). Collecting
the newest matches of a word then read thousands of wide rows. `thread_search` holds
only what search filters and orders by, with the tsvector always stored out of line
(toast_tuple_target=128, STORAGE EXTERNAL), so a bitmap scan of the GIN index touches
few small pages. A trigger keeps it in step with `threads` (inserts, COPY, updates);
it recomputes the tsvector only when the title or the searchable text changed.
SQLite keeps its FTS5 table; nothing changes there.
"""

from __future__ import annotations

from alembic import op

revision = "0002_pg_search_table"
down_revision = "0001_initial"
branch_labels = None
depends_on = None

VECTOR = (
    "setweight(to_tsvector('english', coalesce(NEW.title, '')), 'A') || "
    "setweight(to_tsvector('english', NEW.search_text), 'B')"
)


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        "CREATE TABLE thread_search ("
        " id varchar(40) PRIMARY KEY REFERENCES threads(id) ON DELETE CASCADE,"
        " last_activity_at varchar(32) NOT NULL,"
        " owner_id integer NOT NULL,"
        " org_id integer NOT NULL,"
        " visibility varchar(16) NOT NULL,"
        " is_shared_with_support boolean NOT NULL,"
        " deleted_at varchar(32),"
        " search_vector tsvector NOT NULL"
        ") WITH (toast_tuple_target = 128)"
    )
    op.execute("ALTER TABLE thread_search ALTER COLUMN search_vector SET STORAGE EXTERNAL")
    op.execute(
        f"""
        CREATE FUNCTION loom_thread_search_sync() RETURNS trigger AS $$
        BEGIN
          IF TG_OP = 'UPDATE' AND NEW.title IS NOT DISTINCT FROM OLD.title
             AND NEW.search_text = OLD.search_text THEN
            UPDATE thread_search SET last_activity_at = NEW.last_activity_at,
              owner_id = NEW.owner_id, org_id = NEW.org_id, visibility = NEW.visibility,
              is_shared_with_support = NEW.is_shared_with_support,
              deleted_at = NEW.deleted_at
            WHERE id = NEW.id;
            RETURN NULL;
          END IF;
          INSERT INTO thread_search (id, last_activity_at, owner_id, org_id, visibility,
                                     is_shared_with_support, deleted_at, search_vector)
          VALUES (NEW.id, NEW.last_activity_at, NEW.owner_id, NEW.org_id, NEW.visibility,
                  NEW.is_shared_with_support, NEW.deleted_at, {VECTOR})
          ON CONFLICT (id) DO UPDATE SET
            last_activity_at = EXCLUDED.last_activity_at, owner_id = EXCLUDED.owner_id,
            org_id = EXCLUDED.org_id, visibility = EXCLUDED.visibility,
            is_shared_with_support = EXCLUDED.is_shared_with_support,
            deleted_at = EXCLUDED.deleted_at, search_vector = EXCLUDED.search_vector;
          RETURN NULL;
        END
        $$ LANGUAGE plpgsql
        """
    )
    op.execute(
        "CREATE TRIGGER threads_search_sync AFTER INSERT OR UPDATE ON threads "
        "FOR EACH ROW EXECUTE FUNCTION loom_thread_search_sync()"
    )
    op.execute(
        "INSERT INTO thread_search SELECT id, last_activity_at, owner_id, org_id, visibility, "
        "is_shared_with_support, deleted_at, search_vector FROM threads"
    )
    op.execute("CREATE INDEX ix_thread_search_vector ON thread_search USING gin (search_vector)")
    op.execute("CREATE INDEX ix_thread_search_activity ON thread_search (last_activity_at, id)")
    op.execute("DROP INDEX ix_threads_search")
    op.execute("ALTER TABLE threads DROP COLUMN search_vector")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        "ALTER TABLE threads ADD COLUMN search_vector tsvector GENERATED ALWAYS AS ("
        "setweight(to_tsvector('english', coalesce(title, '')), 'A') || "
        "setweight(to_tsvector('english', search_text), 'B')) STORED"
    )
    op.execute("CREATE INDEX ix_threads_search ON threads USING gin (search_vector)")
    op.execute("DROP TRIGGER threads_search_sync ON threads")
    op.execute("DROP FUNCTION loom_thread_search_sync()")
    op.execute("DROP TABLE thread_search")
