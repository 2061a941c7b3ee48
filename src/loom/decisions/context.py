"""The decision zone of the model's context: what earlier sessions decided and learned.

Three sections, in this order of priority: Active Goals, Recent Decisions, and Prior
Attempts & Lessons (revisits, abandoned and superseded nodes, observations). Lines are
added while they fit `budget` tokens (an offline estimate), so the zone never exceeds
its budget; with nothing logged it is empty.
"""

from __future__ import annotations

from loom.decisions.index import DecisionIndex, NodeRow
from loom.llm.tokens import estimate_tokens

PER_SECTION = 12
DESCRIPTION_CHARS = 160
HEADER = (
    "## Decision graph (this project's goals, decisions and lessons from earlier sessions;"
    " log new ones with decision_log, look things up with decision_query)"
)


def _line(node: NodeRow) -> str:
    text = f"- {node.id} [{node.node_type}, confidence {node.confidence}] {node.title}"
    if node.status != "active":
        text += f" ({node.status})"
    if node.description:
        description = " ".join(node.description.split())
        if len(description) > DESCRIPTION_CHARS:
            description = description[: DESCRIPTION_CHARS - 1] + "…"
        text += f": {description}"
    return text


def build_decision_context(index: DecisionIndex, workspace_root: str | None, budget: int) -> str:
    if budget <= 0:
        return ""
    sections = [
        (
            "### Active Goals",
            index.nodes(
                workspace_root=workspace_root,
                types=["goal"],
                statuses=["active"],
                limit=PER_SECTION,
            ),
        ),
        (
            "### Recent Decisions",
            index.nodes(
                workspace_root=workspace_root,
                types=["decision"],
                statuses=["active"],
                limit=PER_SECTION,
            ),
        ),
        (
            "### Prior Attempts & Lessons",
            _lessons(index, workspace_root),
        ),
    ]
    if not any(rows for _, rows in sections):
        return ""
    lines = [HEADER]
    used = estimate_tokens(HEADER)
    for title, rows in sections:
        if not rows:
            continue
        cost = estimate_tokens(title) + 1
        if used + cost > budget:
            break
        lines.append(title)
        used += cost
        for node in rows:
            line = _line(node)
            cost = estimate_tokens(line) + 1
            if used + cost > budget:
                break
            lines.append(line)
            used += cost
    if len(lines) == 1:
        return ""
    return "\n".join(lines)


def _lessons(index: DecisionIndex, workspace_root: str | None) -> list[NodeRow]:
    failed = index.nodes(
        workspace_root=workspace_root, statuses=["abandoned", "superseded"], limit=PER_SECTION
    )
    learned = index.nodes(
        workspace_root=workspace_root,
        types=["revisit", "observation"],
        statuses=["active"],
        limit=PER_SECTION,
    )
    merged = sorted([*failed, *learned], key=lambda n: n.updated_at, reverse=True)
    return merged[:PER_SECTION]
