"""A time limit on an await that never hides a cancellation: use `within`, not
`asyncio.wait_for`.

On Python 3.11, `asyncio.wait_for` loses a cancellation that lands just as the awaited
thing finishes: it returns the result and the task carries on as if never cancelled
(python/cpython#86296; 3.12 rebuilt `wait_for` on `asyncio.timeout`). A turn awaits a
worker thread with a time limit on every model call (the repo map, the decision
context), and a thread's result comes back through two loop callbacks, so an
interrupt (Ctrl-C, Esc, `interrupt()`) often landed in that window and was lost: the
turn ran on to the end of its work. `asyncio.timeout` re-raises every cancellation
that is not its own, so `within` is built on it. (ruff bans `asyncio.wait_for` in src/.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def within(awaitable: Awaitable[T], seconds: float | None) -> T:
    """`await awaitable`; after `seconds` (None: no limit) the awaitable is cancelled
    and TimeoutError raised. A cancellation of the caller always propagates."""
    async with asyncio.timeout(seconds):
        return await awaitable
