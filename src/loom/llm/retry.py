"""Which model-call errors to retry, and how long to wait before each retry.

Transient: 408, 429, 5xx (including Anthropic's 529 "overloaded"), timeouts and
connection errors. Permanent: every other 4xx (400 bad request, 401 bad key, 403,
404 unknown model, 413 too large, ...). Backoff is exponential with jitter and honours
a server's `retry-after`. The SDKs' own retries are switched off (max_retries=0) so
that every retry goes through this policy and shows up as an event.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from loom.llm.base import LlmError

# Exception class names that mean "the network, not the request, failed". Matched by
# name so this module never imports an HTTP library or SDK.
_TRANSIENT_EXCEPTION_NAMES = frozenset(
    {
        "TimeoutException",
        "ConnectTimeout",
        "ReadTimeout",
        "WriteTimeout",
        "PoolTimeout",
        "ConnectError",
        "ReadError",
        "WriteError",
        "RemoteProtocolError",
        "NetworkError",
        "APIConnectionError",
        "APITimeoutError",
        "ServerDisconnectedError",
    }
)


def status_is_transient(status: int) -> bool:
    """True for HTTP statuses worth retrying (408, 429, 5xx incl. 529)."""
    return status in (408, 429) or status >= 500


def is_transient(error: BaseException) -> bool:
    """Should a model call that failed with `error` be retried?

    `LlmError` says so itself; other exceptions are judged by HTTP status (a
    `status_code` or `status` attribute) or by being a timeout / connection failure.
    """
    if isinstance(error, LlmError):
        return error.transient
    status = getattr(error, "status_code", None) or getattr(error, "status", None)
    if isinstance(status, int):
        return status_is_transient(status)
    if isinstance(error, TimeoutError | ConnectionError):
        return True
    return any(cls.__name__ in _TRANSIENT_EXCEPTION_NAMES for cls in type(error).__mro__)


@dataclass
class RetryPolicy:
    """Exponential backoff with jitter: base_delay * 2**(attempt-1), capped at max_delay.

    `jitter` is the fraction of the delay that is randomised downwards (0.25 means the
    wait is between 75% and 100% of the nominal delay), so many clients that failed
    together do not retry together. A server's `retry_after` is honoured as given (not
    jittered), capped at `max_retry_after`.
    """

    max_retries: int = 4
    base_delay: float = 1.0
    max_delay: float = 30.0
    jitter: float = 0.25
    max_retry_after: float = 120.0
    rng: random.Random = field(default_factory=random.Random, repr=False, compare=False)

    def should_retry(self, attempt: int, error: BaseException) -> bool:
        """`attempt` is the number of the retry about to happen (1 for the first)."""
        return attempt <= self.max_retries and is_transient(error)

    def delay(self, attempt: int, error: BaseException | None = None) -> float:
        """Seconds to wait before retry number `attempt` (1-based)."""
        retry_after = getattr(error, "retry_after", None) if error is not None else None
        if isinstance(retry_after, int | float) and retry_after >= 0:
            return min(float(retry_after), self.max_retry_after)
        nominal = min(self.max_delay, self.base_delay * 2 ** max(0, attempt - 1))
        return nominal * (1.0 - self.jitter * self.rng.random())


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a `retry-after` (seconds or HTTP date) or `retry-after-ms` header."""
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    from datetime import UTC, datetime

    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())
