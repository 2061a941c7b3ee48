"""What a thread's model calls used, summed, and how much of it the prompt cache served:
one reckoning for every face (`loom show`, the REPL, the web page).

    totals = usage_totals(thread.messages)
    totals.cache_text()   # "cache 93%" (of the input tokens), "" when nothing was cached
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loom.core.messages import Usage


@dataclass
class UsageTotals:
    input_tokens: int = 0  # at the full input price (cache reads and writes apart)
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = 0.0  # None: a call of a model with no known price counts in it

    def add(self, usage: Usage | None) -> None:
        """Count one call's `loom.core.messages.Usage` (None: nothing)."""
        if usage is None:
            return
        self.input_tokens += usage.input_tokens or 0
        self.output_tokens += usage.output_tokens or 0
        self.cache_read_tokens += usage.cache_read_tokens or 0
        self.cache_write_tokens += usage.cache_write_tokens or 0
        if usage.cost_usd is None or self.cost_usd is None:
            self.cost_usd = None
        else:
            self.cost_usd += usage.cost_usd

    @property
    def prompt_tokens(self) -> int:
        """Every input token sent, however it was billed."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    @property
    def cache_share(self) -> float | None:
        """The share of the input tokens served from the cache; None before any call."""
        prompt = self.prompt_tokens
        return self.cache_read_tokens / prompt if prompt else None

    def cache_text(self) -> str:
        """`cache 93%`, or "" when nothing was read from a cache."""
        share = self.cache_share
        return f"cache {share * 100:.0f}%" if share and self.cache_read_tokens else ""


def usage_totals(messages: Iterable[object]) -> UsageTotals:
    """The summed usage of the messages that carry one (the assistant's answers)."""
    totals = UsageTotals()
    for message in messages:
        totals.add(getattr(message, "usage", None))
    return totals
