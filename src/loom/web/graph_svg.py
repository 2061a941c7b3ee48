"""The decision graph drawn as SVG on the server (the web page's Graph tab).

Layered by type: goals at the top, then options and decisions, actions, observations and
revisits, outcomes at the bottom. Colour by type; a confidence bar in green (>= 70),
amber (50-69) or red (< 50); superseded and abandoned nodes dashed and faded. Each node
is a link (`#node-ID`) the page turns into a details panel. No script, no external
resources: the SVG is plain markup with escaped text.
"""

from __future__ import annotations

from collections import defaultdict
from html import escape
from typing import Any

LAYER_OF = {
    "goal": 0,
    "option": 1,
    "decision": 2,
    "action": 3,
    "observation": 3,
    "revisit": 3,
    "outcome": 4,
}
COLOURS = {  # fill, stroke: readable in light and dark themes
    "goal": ("#dbeafe", "#1d4ed8"),
    "decision": ("#ede9fe", "#6d28d9"),
    "option": ("#f1f5f9", "#475569"),
    "action": ("#fef3c7", "#b45309"),
    "outcome": ("#dcfce7", "#15803d"),
    "observation": ("#e0f2fe", "#0369a1"),
    "revisit": ("#fce7f3", "#be185d"),
}
OTHER = ("#f5f5f4", "#57534e")
NODE_W, NODE_H = 190, 56
GAP_X, GAP_Y = 28, 64
MARGIN = 24
TITLE_CHARS = 26


def confidence_colour(confidence: int) -> str:
    if confidence >= 70:
        return "#16a34a"
    if confidence >= 50:
        return "#d97706"
    return "#dc2626"


def _short(text: str, limit: int = TITLE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def layout(nodes: list[Any]) -> dict[str, tuple[float, float]]:
    """Top-left corner of each node: one row per layer, in time order within a row."""
    rows: dict[int, list[Any]] = defaultdict(list)
    for node in sorted(nodes, key=lambda n: n.created_at):
        rows[LAYER_OF.get(node.node_type, 3)].append(node)
    widest = max((len(r) for r in rows.values()), default=1)
    width = widest * NODE_W + (widest - 1) * GAP_X
    places: dict[str, tuple[float, float]] = {}
    for depth, layer in enumerate(sorted(rows)):
        row = rows[layer]
        span = len(row) * NODE_W + (len(row) - 1) * GAP_X
        left = MARGIN + (width - span) / 2
        top = MARGIN + depth * (NODE_H + GAP_Y)
        for i, node in enumerate(row):
            places[node.id] = (left + i * (NODE_W + GAP_X), top)
    return places


def render_svg(
    nodes: list[Any],
    edges: list[Any],
    uncertain: set[str] | None = None,
    low: set[str] | None = None,
) -> str:
    """Nodes have id, node_type, title, status, confidence, created_at; edges from_id,
    to_id, edge_type. `uncertain`: made uncertain by a doubtful node upstream; `low`:
    logged with low confidence themselves."""
    uncertain = uncertain or set()
    low = low or set()
    if not nodes:
        return ""
    places = layout(nodes)
    width = max(x for x, _ in places.values()) + NODE_W + MARGIN
    height = max(y for _, y in places.values()) + NODE_H + MARGIN
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="decision-graph" role="img" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" height="{height:.0f}" '
        f'aria-label="Decision graph: {len(nodes)} nodes">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" '
        'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
        '<path d="M0,0 L10,5 L0,10 z" fill="#94a3b8"/></marker></defs>',
    ]
    for edge in edges:
        if edge.from_id not in places or edge.to_id not in places:
            continue
        (x1, y1), (x2, y2) = places[edge.from_id], places[edge.to_id]
        sx, sy = x1 + NODE_W / 2, y1 + (NODE_H if y2 > y1 else 0)
        tx, ty = x2 + NODE_W / 2, y2 + (0 if y2 > y1 else NODE_H)
        dash = ' stroke-dasharray="5 4"' if edge.edge_type in ("supersedes", "rejected") else ""
        mid_y = (sy + ty) / 2
        out.append(
            f'<path class="edge edge-{escape(edge.edge_type)}" d="M{sx:.0f},{sy:.0f} '
            f'C{sx:.0f},{mid_y:.0f} {tx:.0f},{mid_y:.0f} {tx:.0f},{ty:.0f}" fill="none" '
            f'stroke="#94a3b8" stroke-width="1.5"{dash} marker-end="url(#arrow)">'
            f"<title>{escape(edge.edge_type)}</title></path>"
        )
    for node in nodes:
        x, y = places[node.id]
        fill, stroke = COLOURS.get(node.node_type, OTHER)
        faded = node.status != "active"
        dash = ' stroke-dasharray="6 4"' if faded else ""
        opacity = ' opacity="0.6"' if faded else ""
        bar = NODE_W - 20
        filled = bar * max(0, min(100, node.confidence)) / 100
        doubt = " uncertain" if node.id in uncertain else " low" if node.id in low else ""
        said = {" uncertain": " · uncertain", " low": " · low confidence"}.get(doubt, "")
        label = f"{node.node_type}: {node.title} (confidence {node.confidence}, {node.status})"
        out.append(
            f'<a href="#node-{escape(node.id)}" class="node node-{escape(node.node_type)}'
            f'{doubt}" data-node="{escape(node.id)}"{opacity}>'
            f"<title>{escape(label)}</title>"
            f'<rect x="{x:.0f}" y="{y:.0f}" width="{NODE_W}" height="{NODE_H}" rx="8" '
            f'fill="{fill}" stroke="{stroke}" stroke-width="{2.5 if doubt else 1.5}"{dash}/>'
            f'<text x="{x + 10:.0f}" y="{y + 17:.0f}" font-size="10" fill="{stroke}" '
            f'font-weight="600">{escape(node.node_type.upper())}'
            f"{' · ' + escape(node.status) if faded else ''}{said}"
            "</text>"
            f'<text x="{x + 10:.0f}" y="{y + 34:.0f}" font-size="12" fill="#0f172a">'
            f"{escape(_short(node.title))}</text>"
            f'<rect x="{x + 10:.0f}" y="{y + 43:.0f}" width="{bar}" height="4" rx="2" '
            f'fill="#e2e8f0"/>'
            f'<rect x="{x + 10:.0f}" y="{y + 43:.0f}" width="{filled:.0f}" height="4" rx="2" '
            f'fill="{confidence_colour(node.confidence)}"/>'
            "</a>"
        )
    out.append("</svg>")
    return "".join(out)
