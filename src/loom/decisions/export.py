"""Export the graph as Mermaid, Graphviz dot or JSON."""

from __future__ import annotations

import json
import re

from loom.decisions.index import EdgeRow, NodeRow
from loom.decisions.titles import one_line

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


# Characters kept as they are inside a quoted Mermaid label; every other one is written
# as an entity code (`#34;`), so no quote, bar, bracket, `<`, `#` or backtick from a
# thread file (a hand-edited edge_type, a title) can end the label and start a statement.
_MERMAID_PLAIN = re.compile(r"[\w .,:;!?()/+='-]")


def _label(text: str, limit: int = 60) -> str:
    """One line of at most `limit` characters (newlines and runs of blanks as spaces)."""
    return one_line(text, limit)


def _mermaid_text(text: str, limit: int = 60) -> str:
    """`text` for inside `"..."` in Mermaid: one line, every special character encoded."""
    return "".join(
        ch if _MERMAID_PLAIN.fullmatch(ch) else f"#{ord(ch)};" for ch in _label(text, limit)
    )


def to_mermaid(nodes: list[NodeRow], edges: list[EdgeRow]) -> str:
    known = {n.id for n in nodes}
    lines = ["flowchart TD"]
    for node in nodes:
        left, right = SHAPES.get(node.node_type, ("[", "]"))
        label = _mermaid_text(f"{node.node_type}: {node.title} ({node.confidence})")
        lines.append(f'    {_mermaid_id(node.id)}{left}"{label}"{right}')
    for edge in edges:
        if edge.from_id in known and edge.to_id in known:
            arrow = "-.->" if edge.edge_type == "supersedes" else "-->"
            label = _mermaid_text(edge.edge_type, 30)
            lines.append(
                f'    {_mermaid_id(edge.from_id)} {arrow}|"{label}"| {_mermaid_id(edge.to_id)}'
            )
    for node in nodes:
        if node.status != "active":
            lines.append(f"    class {_mermaid_id(node.id)} {_mermaid_id(node.status)}")
    lines.append("    classDef superseded stroke-dasharray: 5 5")
    lines.append("    classDef abandoned opacity:0.5")
    return "\n".join(lines) + "\n"


def _dot_text(text: str, limit: int = 60) -> str:
    """A quoted dot string: one line, `"` and `\\` escaped (dot reads `\\n`, `\\l` as
    line breaks, so no backslash goes through bare)."""
    flat = _label(text, limit).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{flat}"'


def _dot_id(node_id: str) -> str:
    return json.dumps(node_id, ensure_ascii=False)


def to_dot(nodes: list[NodeRow], edges: list[EdgeRow]) -> str:
    known = {n.id for n in nodes}
    lines = ["digraph decisions {", "  rankdir=TB;", "  node [shape=box];"]
    for node in nodes:
        style = ', style="dashed"' if node.status == "superseded" else ""
        label = _dot_text(f"{node.node_type}: {node.title} ({node.confidence})")
        lines.append(f"  {_dot_id(node.id)} [label={label}{style}];")
    for edge in edges:
        if edge.from_id in known and edge.to_id in known:
            lines.append(
                f"  {_dot_id(edge.from_id)} -> {_dot_id(edge.to_id)} "
                f"[label={_dot_text(edge.edge_type, 30)}];"
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
