"""The cost page's figures: tokens and cost per session, per model and per day, summed
from the usage every assistant message records in its thread."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from loom.web.cards import add_cost

MAX_SESSION_ROWS = 200


@dataclass
class Row:
    name: str
    input: int = 0  # at the full price
    output: int = 0
    cache_read: int = 0  # input tokens the provider's prompt cache served
    cost: float | None = 0.0  # None: a model with no known price counts in it
    id: str = ""
    when: str = ""
    share: float = 0.0

    def add(self, usage: Any) -> None:
        self.input += usage.input_tokens or 0
        self.output += usage.output_tokens or 0
        self.cache_read += usage.cache_read_tokens or 0
        self.cost = add_cost(self.cost, usage.cost_usd)


@dataclass
class CostReport:
    threads: int = 0
    tokens: int = 0
    cost: float | None = 0.0
    by_model: list[Row] = field(default_factory=list)
    by_day: list[Row] = field(default_factory=list)
    by_session: list[Row] = field(default_factory=list)
    truncated: bool = False


class CostCache:
    """Per-thread sums keyed by (id, version): a thread file is read again only after it
    changed, so the page stays quick as history grows."""

    def __init__(self) -> None:
        self._threads: dict[str, tuple[int, Row, dict[str, Row], dict[str, Row]]] = {}

    def report(self, summaries: list[Any], load: Any) -> CostReport:
        report = CostReport(threads=len(summaries))
        models: dict[str, Row] = {}
        days: dict[str, Row] = {}
        sessions: list[Row] = []
        for summary in summaries:
            cached = self._threads.get(summary.id)
            if cached is None or cached[0] != summary.version:
                try:
                    thread = load(summary.id)
                except Exception:  # deleted or unreadable meanwhile: skip it
                    continue
                cached = (summary.version, *_sum_thread(thread))
                self._threads[summary.id] = cached
            _, session_row, by_model, by_day = cached
            session_row.when = summary.last_activity_at
            sessions.append(session_row)
            for source, target in ((by_model, models), (by_day, days)):
                for key, row in source.items():
                    total = target.setdefault(key, Row(key))
                    total.input += row.input
                    total.output += row.output
                    total.cache_read += row.cache_read
                    total.cost = add_cost(total.cost, row.cost)
        report.tokens = sum(r.input + r.output for r in sessions)
        report.cost = 0.0
        for row in sessions:
            report.cost = add_cost(report.cost, row.cost)
        report.by_model = sorted(models.values(), key=lambda r: -(r.cost or 0.0))
        report.by_day = sorted(days.values(), key=lambda r: r.name, reverse=True)[:60]
        top = max((r.cost or 0.0 for r in report.by_day), default=0.0)
        for row in report.by_day:
            row.share = (row.cost or 0.0) / top if top else 0.0
        spent = sorted((r for r in sessions if r.input or r.output), key=lambda r: -(r.cost or 0.0))
        report.truncated = len(spent) > MAX_SESSION_ROWS
        report.by_session = spent[:MAX_SESSION_ROWS]
        return report


def _sum_thread(thread: Any) -> tuple[Row, dict[str, Row], dict[str, Row]]:
    session = Row(thread.metadata.title or "", id=thread.id)
    by_model: dict[str, Row] = {}
    by_day: dict[str, Row] = {}
    default_model = f"{thread.provider}:{thread.model}" if thread.model else "unknown"
    for message in thread.messages:
        usage = getattr(message, "usage", None)
        if usage is None:
            continue
        session.add(usage)
        model = getattr(message, "model", None) or default_model
        if ":" not in model and thread.provider:
            model = f"{thread.provider}:{model}"
        by_model.setdefault(model, Row(model)).add(usage)
        day = (message.created_at or thread.created_at or "")[:10] or "unknown"
        by_day.setdefault(day, Row(day)).add(usage)
    return session, by_model, by_day
