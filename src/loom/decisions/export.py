"""Export the graph as Mermaid, Graphviz dot or JSON."""

from __future__ import annotations

import json
import re

from loom.decisions.index import EdgeRow, NodeRow

FORMATS = ("mermaid", "dot", "json")
SHAPES = {  # mermaid node shapes by type
    "goal": ("([", "])"),
    "decision": ("{", "}"),
    "option": ("[/", "/]"),
    "action": ("[", "]"),
    "outcome": ("[[", "]]"),
    "observation": ("(", ")"),
    "revisit": ("[\\", "\\]"),
}


def _mermaid_id(node_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", node_id)


def _label(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text.replace('"', "'")


def to_mermaid(nodes: list[NodeRow], edges: list[EdgeRow]) -> str:
    known = {n.id for n in nodes}
    lines = ["flowchart TD"]
    for node in nodes:
        left, right = SHAPES.get(node.node_type, ("[", "]"))
        label = _label(f"{node.node_type}: {node.title} ({node.confidence})")
        lines.append(f'    {_mermaid_id(node.id)}{left}"{label}"{right}')
    for edge in edges:
        if edge.from_id in known and edge.to_id in known:
            arrow = "-.->" if edge.edge_type == "supersedes" else "-->"
            lines.append(
                f"    {_mermaid_id(edge.from_id)} {arrow}|{edge.edge_type}| "
                f"{_mermaid_id(edge.to_id)}"
            )
    for node in nodes:
        if node.status != "active":
            lines.append(f"    class {_mermaid_id(node.id)} {node.status}")
    lines.append("    classDef superseded stroke-dasharray: 5 5")
    lines.append("    classDef abandoned opacity:0.5")
    return "\n".join(lines) + "\n"


def to_dot(nodes: list[NodeRow], edges: list[EdgeRow]) -> str:
    known = {n.id for n in nodes}
    lines = ["digraph decisions {", "  rankdir=TB;", "  node [shape=box];"]
    for node in nodes:
        style = ', style="dashed"' if node.status == "superseded" else ""
        label = json.dumps(_label(f"{node.node_type}: {node.title} ({node.confidence})"))
        lines.append(f"  {json.dumps(node.id)} [label={label}{style}];")
    for edge in edges:
        if edge.from_id in known and edge.to_id in known:
            lines.append(
                f"  {json.dumps(edge.from_id)} -> {json.dumps(edge.to_id)} "
                f"[label={json.dumps(edge.edge_type)}];"
            )
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_json(nodes: list[NodeRow], edges: list[EdgeRow]) -> str:
    known = {n.id for n in nodes}
    return json.dumps(
        {
            "nodes": [n.__dict__ for n in nodes],
            "edges": [
                {
                    "from": e.from_id,
                    "to": e.to_id,
                    "edge_type": e.edge_type,
                    "weight": e.weight,
                    "rationale": e.rationale,
                    "change_id": e.change_id,
                    "thread_id": e.thread_id,
                }
                for e in edges
                if e.from_id in known and e.to_id in known
            ],
        },
        indent=2,
    )


def export(nodes: list[NodeRow], edges: list[EdgeRow], fmt: str) -> str:
    if fmt == "mermaid":
        return to_mermaid(nodes, edges)
    if fmt == "dot":
        return to_dot(nodes, edges)
    if fmt == "json":
        return to_json(nodes, edges)
    raise ValueError(f"unknown export format {fmt!r}; use one of {', '.join(FORMATS)}")
