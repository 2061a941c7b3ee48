"""Request and response bodies of the HTTP API (they make /openapi.json precise)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from loom.core.thread import ThreadVisibility
from loom.core.wire import (
    RemoteSearchHit,
    RemoteThreadSummary,
    SearchResults,
    ThreadPage,
    WriteResult,
)

__all__ = ["SearchHitOut", "SearchResults", "ThreadPage", "ThreadSummaryOut", "WriteResult"]

THREAD_ID_PATTERN = r"^T-[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"
MAX_VERSION = 2**53


class Health(BaseModel):
    status: str
    database: str


class Me(BaseModel):
    user: str
    org: str
    is_support: bool


# The sync wire shapes the client reads too are defined once, in loom.core.wire.
ThreadSummaryOut = RemoteThreadSummary
SearchHitOut = RemoteSearchHit


class ShareRequest(BaseModel):
    visibility: ThreadVisibility | None = None
    is_shared_with_support: bool | None = None


class ShareInfo(BaseModel):
    id: str
    version: int
    visibility: str
    is_shared_with_support: bool
    share_path: str | None = Field(None, description="open link for public threads")
    share_url: str | None = None


class ConflictBody(BaseModel):
    detail: str
    server_version: int
    server_thread: dict[str, Any]


class ErrorBody(BaseModel):
    detail: Any
