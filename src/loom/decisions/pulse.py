"""Pulse: how the project's decision graph is doing, at a glance.

Active goals, recent decisions, coverage gaps (an active goal or decision with nothing
below it that is an action or outcome), low-confidence nodes (and what they make
uncertain), stale nodes (active, no change for `STALE_DAYS`), orphans (linked to
nothing), and a health score 0-100 that falls with each kind of problem.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from loom.decisions.graph import CASCADE_DEPTH, CASCADE_EDGES, UNCERTAIN_BELOW
from loom.decisions.index import DecisionIndex, NodeRow
from loom.decisions.titles import one_line

STALE_DAYS = 7
RECENT = 10
GAP_TYPES = ("goal", "decision")
FOLLOW_UP_TYPES = ("action", "outcome")


@dataclass
class Pulse:
    total: int
    active_goals: list[NodeRow]
    recent_decisions: list[NodeRow]
    gaps: list[NodeRow]
    low_confidence: list[NodeRow]
    uncertain: list[str]  # ids made uncertain by a low-confidence node upstream
    stale: list[NodeRow]
    orphans: list[NodeRow]
    health: int = 100
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        def ids(rows: list[NodeRow]) -> list[dict[str, object]]:
            return [
                {"id": r.id, "type": r.node_type, "title": r.title, "confidence": r.confidence}
                for r in rows
            ]

        return {
            "total": self.total,
            "health": self.health,
            "active_goals": ids(self.active_goals),
            "recent_decisions": ids(self.recent_decisions),
            "gaps": ids(self.gaps),
            "low_confidence": ids(self.low_confidence),
            "uncertain": self.uncertain,
            "stale": ids(self.stale),
            "orphans": ids(self.orphans),
        }


def pulse(index: DecisionIndex, workspace_root: str | None, now: datetime | None = None) -> Pulse:
    now = now or datetime.now(UTC)
    active = index.nodes(workspace_root=workspace_root, statuses=["active"])
    total = index.count(workspace_root)
    edges = index.edges(workspace_root=workspace_root) if active else []
    by_id = {n.id: n for n in active}
    children: dict[str, list[str]] = {}
    linked: set[str] = set()
    for edge in edges:
        children.setdefault(edge.from_id, []).append(edge.to_id)
        linked.update((edge.from_id, edge.to_id))

    def has_follow_up(node_id: str) -> bool:
        stack, seen = list(children.get(node_id, ())), set()
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            child = by_id.get(current)
            if child is not None and child.node_type in FOLLOW_UP_TYPES:
                return True
            stack.extend(children.get(current, ()))
        return False

    gaps = [n for n in active if n.node_type in GAP_TYPES and not has_follow_up(n.id)]
    low = [n for n in active if n.confidence < UNCERTAIN_BELOW]
    uncertain = _downstream({n.id for n in low}, edges)
    cutoff = (now - timedelta(days=STALE_DAYS)).isoformat().replace("+00:00", "Z")
    stale = [n for n in active if n.updated_at < cutoff]
    orphans = [n for n in active if n.id not in linked and n.node_type != "goal"]
    goals = [n for n in active if n.node_type == "goal"]
    decisions = [n for n in active if n.node_type == "decision"][:RECENT]
    result = Pulse(total, goals, decisions, gaps, low, uncertain, stale, orphans)
    result.health = _health(result, len(active))
    return result


def _downstream(start: set[str], edges: list) -> list[str]:
    out: dict[str, list[str]] = {}
    for edge in edges:
        if edge.edge_type in CASCADE_EDGES:
            out.setdefault(edge.from_id, []).append(edge.to_id)
    found: list[str] = []
    seen = set(start)
    frontier = list(start)
    for _ in range(CASCADE_DEPTH):
        nxt = []
        for node_id in frontier:
            for child in out.get(node_id, ()):
                if child not in seen:
                    seen.add(child)
                    found.append(child)
                    nxt.append(child)
        frontier = nxt
    return found


def _health(p: Pulse, active: int) -> int:
    """100 for a graph with no gaps, doubts, stale or orphan nodes; each problem costs its
    share of the active nodes, weighted by how much a person should care."""
    if active == 0:
        return 100
    penalty = (
        35 * len(p.gaps) / active
        + 25 * (len(p.low_confidence) + len(p.uncertain)) / active
        + 20 * len(p.stale) / active
        + 20 * len(p.orphans) / active
    )
    return max(0, min(100, round(100 - penalty)))


def render_pulse(p: Pulse) -> str:
    lines = [f"Decision graph: {p.total} node(s), health {p.health}/100"]

    def section(title: str, rows: list[NodeRow], limit: int = 8) -> None:
        if not rows:
            return
        lines.append(f"{title} ({len(rows)}):")
        lines.extend(
            f"  {r.id} [{r.node_type}] {one_line(r.title)} (confidence {r.confidence})"
            for r in rows[:limit]
        )
        if len(rows) > limit:
            lines.append(f"  ... and {len(rows) - limit} more")

    section("Active goals", p.active_goals)
    section("Recent decisions", p.recent_decisions)
    section("Coverage gaps (no action or outcome below)", p.gaps)
    section("Low confidence", p.low_confidence)
    if p.uncertain:
        lines.append(f"Uncertain because something upstream is doubtful: {len(p.uncertain)}")
    section(f"Stale (no change for {STALE_DAYS} days)", p.stale)
    section("Orphans (linked to nothing)", p.orphans)
    return "\n".join(lines)
