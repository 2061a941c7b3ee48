"""Organizations, users and API tokens (stored as sha256 hashes, revocable)."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from sqlalchemy import select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from loom.core.clock import now_iso
from loom.core.errors import LoomError
from loom.server.models import ApiToken, Org, User

TOKEN_PREFIX = "loom_"


class IdentityError(LoomError, ValueError):
    """A user/token operation that cannot be done; the message says why."""


@dataclass(frozen=True)
class Principal:
    """Who is making a request."""

    user_id: int
    user_name: str
    org_id: int
    org_name: str
    is_support: bool


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    # 32 random bytes: far beyond guessing, so a fast unsalted hash is enough.
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


async def create_user(
    session: AsyncSession, name: str, org_name: str, *, is_support: bool = False
) -> User:
    name, org_name = name.strip(), org_name.strip()
    if not name or not org_name:
        raise IdentityError("user and organization names must not be empty")
    if await session.scalar(select(User).where(User.name == name)):
        raise IdentityError(f"a user named '{name}' already exists")
    org = await session.scalar(select(Org).where(Org.name == org_name))
    if org is None:
        org = Org(name=org_name, created_at=now_iso())
        session.add(org)
        await session.flush()
    user = User(name=name, org_id=org.id, is_support=is_support, created_at=now_iso())
    session.add(user)
    await session.flush()
    return user


async def create_token(session: AsyncSession, user_name: str) -> tuple[ApiToken, str]:
    """A new token for `user_name`: (row, the token itself — shown once, never stored)."""
    user = await session.scalar(select(User).where(User.name == user_name))
    if user is None:
        raise IdentityError(
            f"no user named '{user_name}'; create one with `loom server create-user NAME --org ORG`"
        )
    token = new_token()
    row = ApiToken(
        user_id=user.id, token_hash=hash_token(token), prefix=token[:12], created_at=now_iso()
    )
    session.add(row)
    await session.flush()
    return row, token


async def revoke_token(session: AsyncSession, token_or_id: str) -> ApiToken:
    """Revoke by token id or by the token itself."""
    if token_or_id.isdigit():
        condition = ApiToken.id == int(token_or_id)
    else:
        condition = ApiToken.token_hash == hash_token(token_or_id)
    row = await session.scalar(select(ApiToken).where(condition))
    if row is None:
        raise IdentityError(f"no token matches '{token_or_id[:12]}'")
    if row.revoked_at is None:
        await session.execute(
            update(ApiToken).where(ApiToken.id == row.id).values(revoked_at=now_iso())
        )
        await session.refresh(row)
    return row


# Plain SQL: this runs on every request, and a prebuilt text statement costs the least.
_PRINCIPAL_SQL = text(
    "SELECT u.id, u.name, u.org_id, o.name, u.is_support FROM api_tokens t "
    "JOIN users u ON u.id = t.user_id JOIN orgs o ON o.id = u.org_id "
    "WHERE t.token_hash = :token_hash AND t.revoked_at IS NULL"
)


async def principal_for_token(conn: AsyncSession | AsyncConnection, token: str) -> Principal | None:
    row = (await conn.execute(_PRINCIPAL_SQL, {"token_hash": hash_token(token)})).first()
    if row is None:
        return None
    return Principal(row[0], row[1], row[2], row[3], bool(row[4]))
