"""Tokens and cost of a session, as the faces show them (the ACP usage_update, the web
page's counters): how full the context window is, and what the thread has cost."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loom.session.runtime.session import Session


@dataclass(frozen=True)
class SessionUsage:
    context_used: int  # tokens of the last request and its answer
    context_size: int  # the model's context window (0 when unknown)
    input_tokens: int  # the whole thread
    output_tokens: int
    cost_usd: float | None  # None: some call's price is unknown


def price_known(model: str) -> bool:
    """Whether Loom knows what `provider:model-id` costs (else its cost is unknown, never
    $0)."""
    from loom.llm.catalog import model_info
    from loom.llm.registry import parse_model_name

    try:
        return model_info(*parse_model_name(model)).known
    except Exception:  # a malformed name: nothing known about it
        return False


def session_cost(session: Session) -> float | None:
    """What the session has cost so far; None when unknown (a call of a model with no
    known price, or nothing called yet on such a model)."""
    cost = session.usage.cost_usd
    return None if cost is None or not price_known(session.model) else cost


def session_usage(session: Session) -> SessionUsage:
    from loom.core.messages import AssistantMessage
    from loom.llm.catalog import model_info
    from loom.llm.registry import parse_model_name

    used = inputs = outputs = 0
    cost: float | None = 0.0
    for message in session.thread.messages:
        if not isinstance(message, AssistantMessage) or message.usage is None:
            continue
        u = message.usage
        inputs += u.input_tokens
        outputs += u.output_tokens
        used = u.input_tokens + u.output_tokens + (u.cache_read_tokens or 0)
        cost = None if cost is None or u.cost_usd is None else cost + u.cost_usd
    try:
        provider, model_id = parse_model_name(session.model)
        size = model_info(provider, model_id).context_window
    except Exception:  # an unknown model: the editor shows no gauge
        size = 0
    if inputs == 0 and outputs == 0:
        cost = 0.0
    return SessionUsage(used, size, inputs, outputs, cost)
