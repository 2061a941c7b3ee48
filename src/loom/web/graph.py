"""The Graph tab: the project's decision graph as server-drawn SVG, the pulse line above
it, and each node's details (shown when its box is clicked)."""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from loom.web.graph_svg import render_svg
from loom.web.views import fragment


def _graph(ws: Any) -> dict[str, Any]:
    nodes, edges = ws.decisions.graph()
    pulse = ws.decisions.pulse()
    # the boxes say what the pulse line counts: "low confidence" for a node logged below
    # 50, "uncertain" for one a doubtful node upstream makes uncertain (not both)
    low = {n.id for n in pulse.low_confidence}
    uncertain = set(pulse.uncertain) - low
    by_id = {n.id: n for n in nodes}
    links: dict[str, list[tuple[str, str, Any]]] = {n.id: [] for n in nodes}
    for edge in edges:
        if edge.from_id in by_id and edge.to_id in by_id:
            links[edge.from_id].append(("→", edge.edge_type, by_id[edge.to_id]))
            links[edge.to_id].append(("←", edge.edge_type, by_id[edge.from_id]))
    return {
        "svg": render_svg(nodes, edges, uncertain, low),
        "pulse": pulse,
        "nodes": nodes,
        "links": links,
        "uncertain": uncertain,
        "low": low,
        "count": len(nodes),
    }


async def graph(request: Request) -> JSONResponse:
    ws = request.app.state.web.ws
    data = await asyncio.to_thread(_graph, ws)
    return JSONResponse({"html": fragment("graph", data), "count": data["count"]})
