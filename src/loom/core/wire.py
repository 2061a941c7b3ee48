"""The sync API's wire shapes, defined once: the server answers with them (and they make
its /openapi.json precise), the client reads the answers through them."""

from __future__ import annotations

from pydantic import BaseModel


class WriteResult(BaseModel):
    """The answer to POST/PUT /api/threads: the version the server now holds."""

    id: str
    version: int
    created: bool


class RemoteThreadSummary(BaseModel):
    """One row of GET /api/threads."""

    id: str
    title: str
    version: int
    last_activity_at: str
    message_count: int
    agent_state_kind: str
    git_branch: str | None = None
    git_remote_url: str | None = None
    visibility: str
    is_shared_with_support: bool
    owner: str


class ThreadPage(BaseModel):
    threads: list[RemoteThreadSummary]
    next_cursor: str | None = None


class RemoteSearchHit(RemoteThreadSummary):
    """One hit of GET /api/threads/search."""

    rank: float
    snippet: str


class SearchResults(BaseModel):
    query: str
    hits: list[RemoteSearchHit]
