"""ThreadSyncClient: the HTTP client for the sync server (httpx, timeouts, bearer auth).

Errors are split by what the caller should do:
- SyncUnavailable: network down, timeout, 5xx: keep the work queued and retry later;
- SyncAuthError: 401/403: the token is wrong or revoked: `loom login` again;
- SyncConflict: 409: the server has a different copy (attached): merge and retry;
- SyncRejected: any other 4xx: this request will never succeed as it is.
"""

from __future__ import annotations

from typing import Any

import httpx

from loom.core.thread import Thread
from loom.core.wire import SearchResults, ThreadPage, WriteResult

DEFAULT_TIMEOUT = httpx.Timeout(10.0, connect=3.0)


class SyncClientError(Exception):
    """Base for sync client errors; messages are meant for people."""


class SyncUnavailable(SyncClientError):
    pass


class SyncAuthError(SyncClientError):
    pass


class SyncRejected(SyncClientError):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class SyncConflict(SyncClientError):
    def __init__(self, message: str, server_thread: Thread) -> None:
        super().__init__(message)
        self.server_thread = server_thread


UpsertResult = WriteResult  # the wire shape (loom.core.wire), defined once for both sides


class ThreadSyncClient:
    def __init__(
        self,
        server_url: str,
        token: str | None,
        *,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.server_url = server_url.rstrip("/")
        headers = {"User-Agent": "loom-sync"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._http = httpx.Client(
            base_url=self.server_url, headers=headers, timeout=timeout, transport=transport
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ThreadSyncClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- requests -------------------------------------------------------------------

    def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.TimeoutException as exc:
            raise SyncUnavailable(f"the sync server at {self.server_url} timed out") from exc
        except httpx.TransportError as exc:
            raise SyncUnavailable(
                f"cannot reach the sync server at {self.server_url} ({exc.__class__.__name__})"
            ) from exc
        if response.status_code < 400 or response.status_code == 409:
            return response
        detail = _detail(response)
        if response.status_code in (401, 403):
            raise SyncAuthError(
                f"the sync server refused the request ({response.status_code}: {detail}); "
                "check `loom login`"
            )
        if response.status_code >= 500 or response.status_code == 429:
            raise SyncUnavailable(
                f"the sync server had a problem ({response.status_code}: {detail}); will retry"
            )
        raise SyncRejected(f"the sync server rejected the request: {detail}", response.status_code)

    def health(self) -> dict[str, Any]:
        return self._request("GET", "/health").json()

    def whoami(self) -> dict[str, Any]:
        return self._request("GET", "/api/me").json()

    def upsert(self, thread: Thread, expected_version: int) -> UpsertResult:
        """PUT the thread; raises SyncConflict (with the server's copy) on 409."""
        response = self._request(
            "PUT",
            f"/api/threads/{thread.id}",
            params={"expected_version": expected_version},
            content=thread.model_dump_json().encode(),
            headers={"Content-Type": "application/json"},
        )
        if response.status_code == 409:
            body = response.json()
            raise SyncConflict(
                body.get("detail", "version conflict"), Thread.model_validate(body["server_thread"])
            )
        return WriteResult.model_validate(response.json())

    def get(self, thread_id: str) -> Thread | None:
        try:
            response = self._request("GET", f"/api/threads/{thread_id}")
        except SyncRejected as exc:
            if exc.status == 404:
                return None
            raise
        return Thread.model_validate(response.json())

    def delete(self, thread_id: str) -> bool:
        """Soft-delete on the server; False if it was not there (already deleted)."""
        try:
            self._request("DELETE", f"/api/threads/{thread_id}")
        except SyncRejected as exc:
            if exc.status == 404:
                return False
            raise
        return True

    def list_page(
        self, limit: int = 50, cursor: str | None = None, *, mine: bool = False
    ) -> tuple[list[dict[str, Any]], str | None]:
        params: dict[str, Any] = {"limit": limit}
        if cursor:
            params["cursor"] = cursor
        if mine:
            params["mine"] = "true"
        page = ThreadPage.model_validate(self._request("GET", "/api/threads", params=params).json())
        return [t.model_dump() for t in page.threads], page.next_cursor

    def search(self, query: str, limit: int = 20) -> list[dict[str, Any]]:
        data = self._request(
            "GET", "/api/threads/search", params={"q": query, "limit": limit}
        ).json()
        return [hit.model_dump() for hit in SearchResults.model_validate(data).hits]

    def share(
        self, thread_id: str, visibility: str | None = None, support: bool | None = None
    ) -> dict[str, Any]:
        body: dict[str, Any] = {}
        if visibility is not None:
            body["visibility"] = visibility
        if support is not None:
            body["is_shared_with_support"] = support
        if not body:
            return self._request("GET", f"/api/threads/{thread_id}/share").json()
        return self._request("POST", f"/api/threads/{thread_id}/share", json=body).json()


def _detail(response: httpx.Response) -> str:
    try:
        detail = response.json().get("detail", response.text)
    except ValueError:
        detail = response.text
    text = detail if isinstance(detail, str) else str(detail)
    return text[:300]
