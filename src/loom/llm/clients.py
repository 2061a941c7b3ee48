"""One SDK client (and so one HTTP client) per provider endpoint and key, per process.

Every session used to build its own: an SDK client, an `httpx2` client and an SSL
context with the CA bundle loaded, ~0.8 MB each, so 1,000 idle sessions cost ~1 GB. The
adapters now ask `shared_client` for theirs, keyed by what makes two clients differ
(provider, endpoint, key, timeout, auth style); sessions on the same account share one
client and its connection pool. The SSL context is one per process.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_lock = threading.RLock()  # providers are built on worker threads (PrebuiltProvider)
_clients: dict[tuple[Any, ...], Any] = {}
_ssl: list[Any] = []


def client_key(
    provider: str, base_url: str | None, api_key: str | None, *rest: Any
) -> tuple[Any, ...]:
    """The cache key; the API key enters it hashed, so it is kept in one place only."""
    digest = hashlib.sha256((api_key or "").encode()).hexdigest()
    return (provider, base_url or "", digest, *rest)


def shared_client(key: tuple[Any, ...], build: Callable[[], T]) -> T:
    """The process's client for `key`, built by `build()` the first time."""
    with _lock:
        client = _clients.get(key)
        if client is None:
            client = _clients[key] = build()
            load_transport_modules()
        return client


# What an async client's first connection imports: anyio's asyncio backend and its socket
# streams (~30 ms). Loaded with the client (on the worker thread that prebuilds a
# session's provider) rather than on the event loop inside the first turn, where the
# import held every other session's stream.
TRANSPORT_MODULES = ("anyio._backends._asyncio", "anyio._core._sockets", "anyio.streams.stapled")


def load_transport_modules() -> None:
    for name in TRANSPORT_MODULES:
        # another anyio layout: loaded at the first connection instead
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def client_count() -> int:
    """How many SDK clients this process holds (one per endpoint and key)."""
    with _lock:
        return len(_clients)


def ssl_context() -> Any:
    """The one SSL context (CA bundle loaded once) every model connection uses."""
    with _lock:
        if not _ssl:
            import httpx2

            _ssl.append(httpx2.create_ssl_context())
        return _ssl[0]
