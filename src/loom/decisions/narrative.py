"""Narrative: a thread's or a goal's nodes as a timeline, in words."""

from __future__ import annotations

from loom.decisions.index import DecisionIndex, EdgeRow, NodeRow
from loom.decisions.titles import one_line

VERBS = {
    "goal": "set the goal",
    "decision": "decided",
    "option": "considered",
    "action": "did",
    "outcome": "saw the outcome",
    "observation": "noticed",
    "revisit": "revisited",
}
EDGE_WORDS = {
    "leads_to": "which led to",
    "chosen": "choosing",
    "rejected": "rejecting",
    "requires": "which requires",
    "blocks": "which blocks",
    "enables": "which enables",
    "supersedes": "replacing",
}


def goal_subgraph(index: DecisionIndex, goal_id: str) -> list[NodeRow]:
    """The goal and every node below it (following edges from parent to child)."""
    seen: dict[str, NodeRow] = {}
    frontier = [goal_id]
    while frontier:
        rows = [index.node(node_id) for node_id in frontier if node_id not in seen]
        fresh = [row for row in rows if row is not None]
        for row in fresh:
            seen[row.id] = row
        edges = index.edges(node_ids=[row.id for row in fresh]) if fresh else []
        frontier = [e.to_id for e in edges if e.from_id in seen and e.to_id not in seen]
    return list(seen.values())


def narrative(nodes: list[NodeRow], edges: list[EdgeRow], title: str) -> str:
    if not nodes:
        return f"{one_line(title, 200)}: nothing was logged."
    by_id = {n.id: n for n in nodes}
    incoming: dict[str, list[EdgeRow]] = {}
    for edge in edges:
        if edge.from_id in by_id and edge.to_id in by_id:
            incoming.setdefault(edge.to_id, []).append(edge)
    lines = [f"{one_line(title, 200)}:"]
    for node in sorted(nodes, key=lambda n: n.created_at):
        when = node.created_at[:16].replace("T", " ")
        sentence = f"{when}  {VERBS.get(node.node_type, f'logged a {node.node_type}')}: "
        sentence += one_line(node.title)
        links = [
            f"{EDGE_WORDS.get(e.edge_type) or one_line(e.edge_type, 30)} "
            f"from “{one_line(by_id[e.from_id].title)}”"
            for e in incoming.get(node.id, ())
        ]
        if links:
            sentence += " (" + "; ".join(links) + ")"
        details = []
        if node.confidence < 100:
            details.append(f"confidence {node.confidence}")
        if node.status != "active":
            details.append(f"now {node.status}")
        if details:
            sentence += f" [{', '.join(details)}]"
        if node.description:
            sentence += f". {node.description.strip()}"
        lines.append(sentence)
    return "\n".join(lines)
