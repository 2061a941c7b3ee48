"""Thread operations on the database: optimistic-locking upsert, read, list, search,
soft delete and sharing. Everything is decided from the database row, never from
process memory, so any number of server processes can serve one database.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, cast

from sqlalchemy import CursorResult, Table, select, text, tuple_, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from loom.core.clock import now_iso
from loom.core.thread import Thread
from loom.core.wire import WriteResult
from loom.server.access import can_read, readable_clause
from loom.server.history import extends, prefix_hashes
from loom.server.identity import Principal
from loom.server.models import ThreadRow, User
from loom.server.rows import BadThread, new_share_token, thread_columns
from loom.server.search import postgres_search, sqlite_search

SUMMARY_COLUMNS = [
    ThreadRow.id,
    ThreadRow.title,
    ThreadRow.version,
    ThreadRow.last_activity_at,
    ThreadRow.message_count,
    ThreadRow.agent_state_kind,
    ThreadRow.git_branch,
    ThreadRow.git_remote_url,
    ThreadRow.visibility,
    ThreadRow.is_shared_with_support,
    User.name.label("owner"),
]


class RecordNotFound(LookupError):
    """No thread (or share token) by that id on the server: the API answers 404."""


class Forbidden(PermissionError):
    pass


class BadCursor(ValueError):
    pass


class Conflict(Exception):
    """The write was based on an older copy; carries the server's copy."""

    def __init__(self, message: str, server_version: int, server_thread: dict[str, Any]) -> None:
        super().__init__(message)
        self.server_version = server_version
        self.server_thread = server_thread


Written = WriteResult  # the wire shape (loom.core.wire), defined once for both sides


def summary(row: Any) -> dict[str, Any]:
    return {
        "id": row.id,
        "title": row.title,
        "version": row.version,
        "last_activity_at": row.last_activity_at,
        "message_count": row.message_count,
        "agent_state_kind": row.agent_state_kind,
        "git_branch": row.git_branch,
        "git_remote_url": row.git_remote_url,
        "visibility": row.visibility,
        "is_shared_with_support": bool(row.is_shared_with_support),
        "owner": row.owner,
    }


def encode_cursor(last_activity_at: str, thread_id: str) -> str:
    raw = json.dumps([last_activity_at, thread_id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[str, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        value = json.loads(raw)
        if isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value):
            return value[0], value[1]
    except (binascii.Error, ValueError, UnicodeDecodeError):
        pass
    raise BadCursor("cursor is not one this server gave out; start again without `cursor`")


_UPDATABLE = [
    "version",
    "title",
    "agent_state_kind",
    "message_count",
    "history_hash",
    "created_at",
    "updated_at",
    "last_activity_at",
    "git_branch",
    "git_remote_url",
    "visibility",
    "is_shared_with_support",
    "data",
    "search_text",
    "server_updated_at",
]
# The usual write in one statement that checks every rule itself: owner, not deleted,
# the version the writer saw, a newer version, and history that extends the stored one
# (:hashes holds the new copy's prefix hashes, 64 hex characters each).
_FAST_UPDATE = text(
    "UPDATE threads SET "
    + ", ".join(f"{name} = :{name}" for name in _UPDATABLE)
    + " WHERE id = :id AND owner_id = :owner_id AND deleted_at IS NULL"
    " AND version = :expected AND version < :version AND message_count <= :new_count"
    " AND history_hash = substr(:hashes, message_count * 64 + 1, 64)"
)


class ThreadRepository:
    def __init__(self, engine: AsyncEngine, sessions: async_sessionmaker[AsyncSession]) -> None:
        self.engine = engine
        # Single statements need no BEGIN/COMMIT round trips: each is atomic on its own.
        self.autocommit = engine.execution_options(isolation_level="AUTOCOMMIT")
        self.sessions = sessions
        self.dialect = engine.dialect.name

    async def _row(self, session: AsyncSession, thread_id: str) -> ThreadRow | None:
        return await session.get(ThreadRow, thread_id, populate_existing=True)

    async def get(self, p: Principal, thread_id: str) -> dict[str, Any]:
        async with self.sessions() as session:
            row = await self._row(session, thread_id)
            if row is None or not can_read(p, row):
                raise RecordNotFound(thread_id)
            return json.loads(row.data)

    async def get_shared(self, share_token: str) -> dict[str, Any]:
        async with self.sessions() as session:
            row = await session.scalar(
                select(ThreadRow).where(ThreadRow.share_token == share_token)
            )
            if row is None or row.deleted_at is not None or row.visibility != "public":
                raise RecordNotFound(share_token)
            return json.loads(row.data)

    async def write(self, p: Principal, thread: Thread, expected: int | None) -> Written:
        """Create or update. `expected` is the version the writer last saw (None/0: new)."""
        hashes = prefix_hashes(thread.messages)
        columns = thread_columns(thread, hashes)
        if expected:
            params = {
                **columns,
                "server_updated_at": now_iso(),
                "id": thread.id,
                "owner_id": p.user_id,
                "expected": expected,
                "new_count": len(thread.messages),
                "hashes": "".join(hashes),
            }
            async with self.autocommit.connect() as conn:
                result = await conn.execute(_FAST_UPDATE, params)
            if result.rowcount == 1:
                return Written(id=thread.id, version=thread.version, created=False)
        else:
            # A new thread in one statement; if the id exists, fall through to explain.
            async with self.autocommit.connect() as conn:
                result = await conn.execute(self._insert_new(p, thread, columns))
            if result.rowcount == 1:
                return Written(id=thread.id, version=thread.version, created=True)
        # New thread, or a rule failed: read the row to insert or to explain the refusal.
        async with self.sessions() as session:
            row = await self._row(session, thread.id)
            await session.commit()  # end the read before writing (SQLite lock upgrade)
            if row is None:
                return await self._insert(session, p, thread, columns)
            if row.owner_id != p.user_id:
                if can_read(p, row):
                    raise Forbidden(f"thread {thread.id} belongs to another user")
                raise RecordNotFound(thread.id)
            if row.deleted_at is None:
                self._check_update(row, thread, expected)
            condition = (ThreadRow.id == thread.id) & (ThreadRow.version == row.version)
            values = {**columns, "server_updated_at": now_iso(), "deleted_at": None}
            result = await session.execute(update(ThreadRow).where(condition).values(values))
            await session.commit()
            if _rows_changed(result) != 1:  # someone wrote between our read and our write
                current = await self._row(session, thread.id)
                assert current is not None
                raise self._conflict(current, "the thread changed on the server meanwhile")
            return Written(id=thread.id, version=thread.version, created=False)

    def _insert_new(self, p: Principal, thread: Thread, columns: dict[str, Any]) -> Any:
        if self.dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert
        else:
            from sqlalchemy.dialects.sqlite import insert
        values = {
            **columns,
            "id": thread.id,
            "owner_id": p.user_id,
            "org_id": p.org_id,
            "share_token": new_share_token(),
            "server_updated_at": now_iso(),
        }
        table = cast(Table, ThreadRow.__table__)
        return insert(table).values(values).on_conflict_do_nothing(index_elements=["id"])

    def _check_update(self, row: ThreadRow, thread: Thread, expected: int | None) -> None:
        if expected != row.version:
            said = "no expected_version" if expected is None else f"expected_version {expected}"
            raise self._conflict(row, f"sent {said} but the server has version {row.version}")
        if thread.version <= row.version:
            raise self._conflict(
                row, f"version {thread.version} is not newer than the server's {row.version}"
            )
        if not extends(thread.messages, row.message_count, row.history_hash):
            raise self._conflict(
                row, "this copy does not contain the server's history; merge and retry"
            )

    async def _insert(
        self, session: AsyncSession, p: Principal, thread: Thread, columns: dict[str, Any]
    ) -> Written:
        session.add(
            ThreadRow(
                id=thread.id,
                owner_id=p.user_id,
                org_id=p.org_id,
                share_token=new_share_token(),
                server_updated_at=now_iso(),
                **columns,
            )
        )
        try:
            await session.commit()
        except IntegrityError:
            await session.rollback()
            current = await self._row(session, thread.id)
            if current is None:
                raise
            if current.owner_id != p.user_id:
                raise RecordNotFound(thread.id) from None
            raise self._conflict(current, "the thread already exists on the server") from None
        return Written(id=thread.id, version=thread.version, created=True)

    @staticmethod
    def _conflict(row: ThreadRow, why: str) -> Conflict:
        return Conflict(f"version conflict on {row.id}: {why}", row.version, json.loads(row.data))

    async def list(
        self, p: Principal, limit: int, cursor: str | None, mine: bool = False
    ) -> tuple[list[dict[str, Any]], str | None]:
        query = (
            select(*SUMMARY_COLUMNS)
            .join(User, User.id == ThreadRow.owner_id)
            .where(readable_clause(p))
            .order_by(ThreadRow.last_activity_at.desc(), ThreadRow.id.desc())
            .limit(limit + 1)
        )
        if mine:
            query = query.where(ThreadRow.owner_id == p.user_id)
        if cursor:
            at, thread_id = decode_cursor(cursor)
            query = query.where(tuple_(ThreadRow.last_activity_at, ThreadRow.id) < (at, thread_id))
        async with self.sessions() as session:
            rows = (await session.execute(query)).all()
        items = [summary(r) for r in rows[:limit]]
        next_cursor = None
        if len(rows) > limit:
            last = rows[limit - 1]
            next_cursor = encode_cursor(last.last_activity_at, last.id)
        return items, next_cursor

    async def search(self, p: Principal, text: str, limit: int) -> list[dict[str, Any]]:
        async with self.sessions() as session:
            if self.dialect == "postgresql":
                query = await postgres_search(session, p, text, limit, SUMMARY_COLUMNS)
            else:
                query = sqlite_search(p, text, limit, SUMMARY_COLUMNS)
                if query is None:
                    return []
            query = query.join(User, User.id == ThreadRow.owner_id)
            rows = (await session.execute(query)).all()
        return [
            {**summary(r), "rank": float(r.rank or 0.0), "snippet": r.snippet or ""} for r in rows
        ]

    async def _owned(self, session: AsyncSession, p: Principal, thread_id: str) -> ThreadRow:
        row = await self._row(session, thread_id)
        if row is None or not can_read(p, row):
            raise RecordNotFound(thread_id)
        if row.owner_id != p.user_id:
            raise Forbidden(f"only the owner may change thread {thread_id}")
        return row

    async def delete(self, p: Principal, thread_id: str) -> None:
        async with self.sessions() as session:
            await self._owned(session, p, thread_id)
            await session.commit()
            await session.execute(
                update(ThreadRow)
                .where(ThreadRow.id == thread_id)
                .values(deleted_at=now_iso(), server_updated_at=now_iso())
            )
            await session.commit()

    async def share(
        self, p: Principal, thread_id: str, visibility: str | None, support: bool | None
    ) -> dict[str, Any]:
        """Change who may read a thread; bumps the version so clients pull the change."""
        row: Any = None  # the last copy read, for the conflict after five tries
        for _attempt in range(5):
            async with self.sessions() as session:
                row = await self._owned(session, p, thread_id)
                await session.commit()
                if visibility is None and support is None:
                    return self._share_info(row)
                data = json.loads(row.data)
                if visibility is not None:
                    data["visibility"] = visibility
                if support is not None:
                    data["is_shared_with_support"] = support
                data["version"] = row.version + 1
                data["updated_at"] = now_iso()
                try:
                    columns = thread_columns(Thread.model_validate(data))
                except BadThread:
                    raise
                result = await session.execute(
                    update(ThreadRow)
                    .where(ThreadRow.id == thread_id, ThreadRow.version == row.version)
                    .values({**columns, "server_updated_at": now_iso()})
                )
                await session.commit()
                if _rows_changed(result) == 1:
                    updated = await self._row(session, thread_id)
                    assert updated is not None
                    return self._share_info(updated)
        raise self._conflict(row, "the thread kept changing; try again")

    @staticmethod
    def _share_info(row: ThreadRow) -> dict[str, Any]:
        return {
            "id": row.id,
            "version": row.version,
            "visibility": row.visibility,
            "is_shared_with_support": bool(row.is_shared_with_support),
            "share_path": f"/shared/{row.share_token}" if row.visibility == "public" else None,
        }


def _rows_changed(result: Any) -> int:
    """How many rows an UPDATE changed (an UPDATE's result is a CursorResult; the async
    session's `execute` is typed as returning any Result)."""
    return cast(CursorResult[Any], result).rowcount
