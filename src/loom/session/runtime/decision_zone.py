"""The decision graph's zone of a model call's context, fetched off the event loop."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from loom._timeouts import within

log = logging.getLogger(__name__)


async def fetch_decision_context(
    hook: Callable[[int], str] | None, budget: int, timeout: float
) -> str:
    """The decision zone for one model call; "" when off, slow or broken (never fatal)."""
    if hook is None or budget <= 0:
        return ""
    try:
        text = await within(asyncio.to_thread(hook, budget), timeout)
    except TimeoutError:
        log.warning("the decision context took longer than %.1f s; skipped this call", timeout)
        return ""
    except Exception as exc:  # the graph must never stop a turn
        log.warning("the decision context failed (%s); skipped this call", exc)
        return ""
    return text if isinstance(text, str) else ""
