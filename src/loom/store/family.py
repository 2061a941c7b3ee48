"""Threads with their sub-agents' threads under them: `loom list --tree`, the web's history.

    rows = family_rows(index, limit=50, offset=0)   # summary dicts, each with `depth`

The top level is a page of threads no sub-agent made (newest activity first, from
`offset`); each is followed by its sub-agents' threads, oldest first, and theirs, whole
(one query per generation). Stdlib only: `loom list --tree` answers before Typer loads.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing costs start-up time
if TYPE_CHECKING:
    from typing import Any

    from loom.store.index import ThreadIndex


def family_rows(
    index: ThreadIndex, limit: int, offset: int = 0, project: str | None = None
) -> list[dict[str, Any]]:
    """`project`: only the families started in that project root (ThreadIndex.list)."""
    top = index.list(limit, offset, top_level=True, project=project)
    known = {row["id"] for row in top}
    by_parent: dict[str, list[dict[str, Any]]] = {}
    frontier = [row["id"] for row in top]
    while frontier:
        children = [c for c in index.children(frontier) if c["id"] not in known]
        known.update(c["id"] for c in children)
        for child in children:
            by_parent.setdefault(child["parent_thread_id"], []).append(child)
        frontier = [c["id"] for c in children]
    rows: list[dict[str, Any]] = []

    def add(row: dict[str, Any], depth: int) -> None:
        rows.append({**row, "depth": depth})
        for child in by_parent.get(row["id"], []):
            add(child, depth + 1)

    for row in top:
        add(row, 0)
    return rows
