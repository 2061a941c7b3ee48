"""Who may read which thread (the rules in one place, as Python and as SQL)."""

from __future__ import annotations

from sqlalchemy import ColumnElement, and_, or_

from loom.server.identity import Principal
from loom.server.models import ThreadRow


def can_read(p: Principal, row: ThreadRow) -> bool:
    if row.deleted_at is not None:
        return False
    if row.owner_id == p.user_id:
        return True
    if row.visibility == "public":
        return True
    if row.visibility == "organization" and row.org_id == p.org_id:
        return True
    return p.is_support and row.is_shared_with_support


def readable_clause(p: Principal) -> ColumnElement[bool]:
    """SQL form of `can_read` (keep the two in step; tests compare them)."""
    rules = [
        ThreadRow.owner_id == p.user_id,
        ThreadRow.visibility == "public",
        and_(ThreadRow.visibility == "organization", ThreadRow.org_id == p.org_id),
    ]
    if p.is_support:
        rules.append(ThreadRow.is_shared_with_support.is_(True))
    return and_(ThreadRow.deleted_at.is_(None), or_(*rules))
