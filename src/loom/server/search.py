"""Full-text search: PostgreSQL (tsvector + GIN, ts_rank, ts_headline) and SQLite (FTS5).

User text never reaches a query parser as syntax: PostgreSQL gets it through
websearch_to_tsquery (which accepts anything); for FTS5 every word is quoted.
"""

from __future__ import annotations

import json
import re
from typing import Any

from sqlalchemy import Select, and_, case, desc, false, func, literal_column, select, table, text
from sqlalchemy.ext.asyncio import AsyncSession

from loom.server.access import readable_clause
from loom.server.identity import Principal
from loom.server.models import ThreadRow, ThreadSearch

_WORD = re.compile(r"\w+", re.UNICODE)
MAX_QUERY_WORDS = 32
CANDIDATES = 200  # PostgreSQL: how many of the newest matches are ranked
BITMAP_BELOW = 12_000  # PostgreSQL: estimated matches under which the GIN bitmap is used
HEADLINE_MAX_CHARS = 20_000
HEADLINE_OPTIONS = "StartSel=[, StopSel=], MaxWords=24, MinWords=10, MaxFragments=2"


def fts5_query(text: str) -> str | None:
    """Quote each word so FTS5 sees plain terms (implicit AND); None if no words."""
    words = _WORD.findall(text)[:MAX_QUERY_WORDS]
    if not words:
        return None
    return " ".join('"' + word.replace('"', '""') + '"' for word in words)


async def postgres_search(
    session: AsyncSession, p: Principal, text_query: str, limit: int, columns: list[Any]
) -> Select:
    """Rank the newest matches, then highlight the top ones.

    Ranking every match of a common word means reading every matching tsvector; instead
    the CANDIDATES most recently active matches are ranked. How to collect them depends
    on how common the words are, which the planner estimates from its statistics:
    - common (>= BITMAP_BELOW matches): walk the activity index newest first, checking
      each row; 200 matches turn up within a few thousand rows;
    - rarer: read the GIN index's matches (a bitmap over the narrow thread_search
      table) and keep the newest. The planner's own choice here is the index walk,
      which for a word in 3% of threads checks thousands of out-of-line tsvectors,
      so this transaction turns that plan off (SET LOCAL: this query only).
    """
    query = func.websearch_to_tsquery("english", text_query)
    estimate = await session.scalar(
        text(
            "EXPLAIN (FORMAT JSON) SELECT 1 FROM thread_search "
            "WHERE search_vector @@ websearch_to_tsquery('english', CAST(:q AS text))"
        ),
        {"q": text_query},
    )
    plan = json.loads(estimate) if isinstance(estimate, str) else estimate
    vector = literal_column("thread_search.search_vector")
    readable = readable_clause(p, ThreadSearch)
    if plan[0]["Plan"]["Plan Rows"] < BITMAP_BELOW:
        # SET LOCAL for this transaction only, both in one round trip.
        await session.execute(
            text(
                "SELECT set_config('enable_indexscan', 'off', true), "
                "set_config('enable_seqscan', 'off', true)"
            )
        )
        matching = and_(vector.op("@@")(query), readable)
    else:
        # Walking newest first: test access before the text, so only the tsvectors of
        # readable rows are fetched (PostgreSQL would otherwise test the cheaper-looking
        # @@ first, fetching every row's out-of-line tsvector).
        matching = case((readable, vector.op("@@")(query)), else_=false())
    candidates = (
        select(
            ThreadSearch.id.label("cid"),
            ThreadSearch.last_activity_at.label("activity"),
            vector.label("vec"),
        )
        .where(matching)
        .order_by(ThreadSearch.last_activity_at.desc())
        .limit(CANDIDATES)
        .subquery()
    )
    rank = func.ts_rank(candidates.c.vec, query).label("rank")
    hits = (
        select(candidates.c.cid.label("hit_id"), rank)
        .order_by(desc("rank"), candidates.c.activity.desc())
        .limit(limit)
        .subquery()
    )
    # ts_headline re-parses the text it is given: cap it so a huge thread costs no more.
    shown = func.left(ThreadRow.search_text, HEADLINE_MAX_CHARS)
    snippet = func.ts_headline("english", shown, query, HEADLINE_OPTIONS)
    return (
        select(*columns, hits.c.rank, snippet.label("snippet"))
        .join(hits, hits.c.hit_id == ThreadRow.id)
        .order_by(hits.c.rank.desc(), ThreadRow.last_activity_at.desc())
    )


def sqlite_search(p: Principal, text: str, limit: int, columns: list[Any]) -> Select | None:
    match = fts5_query(text)
    if match is None:
        return None
    fts = table("threads_fts")
    fts_rowid = literal_column("threads_fts.rowid")
    # bm25 is lower-is-better; negate it so larger means more relevant, as in PostgreSQL.
    rank = (-func.bm25(literal_column("threads_fts"))).label("rank")
    snippet = func.snippet(literal_column("threads_fts"), 1, "[", "]", "…", 16).label("snippet")
    return (
        select(*columns, rank, snippet)
        .select_from(fts)
        .join(ThreadRow, literal_column("threads.rowid") == fts_rowid)
        .where(literal_column("threads_fts").op("MATCH")(match), readable_clause(p))
        .order_by(desc("rank"), ThreadRow.last_activity_at.desc())
        .limit(limit)
    )
