"""The model-request guard and the HTTP client every SDK is given.

With `LOOM_ALLOW_MODEL_REQUESTS=0` (the test suite sets it) a request to any host but
loopback (127.0.0.0/8, ::1, localhost) fails loudly *before* any network I/O, so a test
that forgot to point a provider at the fake server can never reach, or pay, a real one.
The check sits in the transport, below every SDK, so no code path can skip it.

All three SDKs (anthropic, openai, google-genai) run on httpx2, so the client is an
`httpx2.AsyncClient`; httpx2 is imported only when a client is built.
"""

from __future__ import annotations

import functools
import ipaddress
import os
from contextvars import ContextVar
from typing import Any

from loom.llm.base import LlmError

GUARD_ENV = "LOOM_ALLOW_MODEL_REQUESTS"

# Responses opened by the current task's model call (see `_errors.sdk_stream`), so the
# call can close its HTTP response itself when it stops early: some SDK stream wrappers
# (google-genai's) do not close it, and the server would keep generating (and billing).
open_responses: ContextVar[list[Any] | None] = ContextVar("loom_open_responses", default=None)


class ModelRequestBlocked(LlmError):
    """A request to a real model host while LOOM_ALLOW_MODEL_REQUESTS=0."""

    def __init__(self, host: str, url: str) -> None:
        super().__init__(
            f"Blocked a model request to {host} ({url}): {GUARD_ENV}=0 allows only loopback "
            "hosts. Point the provider at a local server (base_url / *_BASE_URL) or unset "
            f"{GUARD_ENV}.",
            transient=False,
        )
        self.host = host


def model_requests_allowed() -> bool:
    return os.environ.get(GUARD_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


@functools.lru_cache(maxsize=64)  # asked on every request, of the same few hosts
def is_loopback_host(host: str) -> bool:
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_model_request(url: object) -> None:
    """Raise ModelRequestBlocked if the guard is on and `url` is not loopback.

    `url` is an httpx2/httpx URL or a string.
    """
    if model_requests_allowed():
        return
    host = getattr(url, "host", None)
    if host is None:
        from urllib.parse import urlsplit

        host = urlsplit(str(url)).hostname or ""
    if not is_loopback_host(str(host)):
        raise ModelRequestBlocked(str(host), str(url))


def guarded_async_client(timeout: float, *, connect_timeout: float = 10.0) -> Any:
    """An `httpx2.AsyncClient` whose transport enforces the guard on every request.

    Connections are pooled per event loop (a pooled connection cannot cross loops: a
    process that runs `asyncio.run` twice would reuse a dead one), all with the
    process's one SSL context (`loom.llm.clients.ssl_context`)."""
    import asyncio
    import weakref

    import httpx2

    from loom.llm.clients import ssl_context

    context = ssl_context()  # made now, off the event loop (see PrebuiltProvider)

    class _GuardedTransport(httpx2.AsyncBaseTransport):
        def __init__(self) -> None:
            self._pools: weakref.WeakKeyDictionary[Any, httpx2.AsyncHTTPTransport] = (
                weakref.WeakKeyDictionary()
            )

        def _pool(self) -> httpx2.AsyncHTTPTransport:
            loop = asyncio.get_running_loop()
            pool = self._pools.get(loop)
            if pool is None:
                pool = self._pools[loop] = httpx2.AsyncHTTPTransport(verify=context)
            return pool

        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            check_model_request(request.url)
            response = await self._pool().handle_async_request(request)
            tracked = open_responses.get()
            if tracked is not None:
                tracked.append(response)
            return response

        async def aclose(self) -> None:
            pool = self._pools.pop(asyncio.get_running_loop(), None)
            if pool is not None:
                await pool.aclose()

    return httpx2.AsyncClient(
        transport=_GuardedTransport(),
        timeout=httpx2.Timeout(timeout, connect=connect_timeout),
        follow_redirects=True,
    )


def find_cause(error: BaseException, kind: type[BaseException]) -> BaseException | None:
    """The first exception of `kind` in `error`'s cause/context chain (SDKs wrap ours)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None
