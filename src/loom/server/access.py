"""Who may read which thread (the rules in one place, as Python and as SQL)."""

from __future__ import annotations

from typing import Any

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


def readable_clause(p: Principal, table: Any = ThreadRow) -> ColumnElement[bool]:
    """SQL form of `can_read` over `threads` or `thread_search` (same column names)."""
    rules = [
        table.owner_id == p.user_id,
        table.visibility == "public",
        and_(table.visibility == "organization", table.org_id == p.org_id),
    ]
    if p.is_support:
        rules.append(table.is_shared_with_support.is_(True))
    return and_(table.deleted_at.is_(None), or_(*rules))
