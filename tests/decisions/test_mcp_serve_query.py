"""`loom mcp serve` offers decision_query over the project's graph (read-only); it does
not offer decision_log, whose entries would belong to no thread."""

from __future__ import annotations

import json
import os
from pathlib import Path

from loom.core.decisions import DecisionEdge, DecisionLog, DecisionNode
from loom.core.thread import Thread
from loom.session import ToolAccess, Workspace
from loom.store.serialize import thread_to_bytes


async def test_decision_query_reads_the_graph_and_decision_log_is_not_offered(
    tmp_path: Path,
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    workspace = Workspace.open(cwd=project)
    thread = Thread.new(workspace_root=str(workspace.project_root))
    thread.decision_graph = DecisionLog(
        nodes=[DecisionNode(node_type="goal", title="Ship the MCP face", thread_id=thread.id)]
    )
    threads = Path(os.environ["LOOM_HOME"]) / "data" / "threads"
    threads.mkdir(parents=True, exist_ok=True)
    (threads / f"{thread.id}.json").write_bytes(thread_to_bytes(thread))
    access = ToolAccess(workspace)
    try:
        names = {t.name for t in access.tools()}
        assert "decision_query" in names and "decision_log" not in names
        text, is_error = await access.run("decision_query", {"query": "goals"})
        assert not is_error and "Ship the MCP face" in text
    finally:
        await access.aclose()
        await workspace.shutdown()


def _thread_with_graph(root: str, goal: str, decision: str, **fields: object) -> Thread:
    thread = Thread.model_validate({**Thread.new(workspace_root=root).model_dump(), **fields})
    nodes = [
        DecisionNode(node_type="goal", title=goal, thread_id=thread.id),
        DecisionNode(node_type="decision", title=decision, thread_id=thread.id),
    ]
    edge = {"from": nodes[0].id, "to": nodes[1].id, "edge_type": "leads_to"}
    edges = [DecisionEdge.model_validate(edge)]
    thread.decision_graph = DecisionLog(nodes=nodes, edges=edges)
    return thread


async def test_private_threads_decisions_stay_out_unless_include_private(
    tmp_path: Path,
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    workspace = Workspace.open(cwd=project)
    root = str(workspace.project_root)
    private = {"is_private": True, "visibility": "private"}
    shared = _thread_with_graph(root, "Ship the zebra face", "Use zebra stripes")
    secret = _thread_with_graph(root, "Zebra secret goal", "Zebra secret decision", **private)
    flipped = _thread_with_graph(root, "Zebra flipped goal", "Zebra flipped choice", **private)
    store = workspace.threads.local
    for thread in (shared, secret, flipped):
        store.save(thread)
    path = store.path_for(flipped.id)  # flipped back to shared behind Loom's back
    data = json.loads(path.read_text())
    data.update(is_private=False, visibility="organization")
    path.write_text(json.dumps(data))
    secret_goal = secret.decision_graph.nodes[0].id

    hidden = ToolAccess(workspace)
    shown = ToolAccess(workspace, include_private=True)
    try:
        for query in ({"query": "goals"}, {"query": "recent"}, {"query": "pulse"},
                      {"query": "search", "text": "zebra"}):  # fmt: skip
            text, is_error = await hidden.run("decision_query", query)
            assert not is_error, text
            assert "secret" not in text and "flipped" not in text, (query, text)
        text, _ = await hidden.run("decision_query", {"query": "search", "text": "zebra"})
        assert "Ship the zebra face" in text or "Use zebra stripes" in text
        for query in ("node", "narrative"):
            text, is_error = await hidden.run(
                "decision_query", {"query": query, "node_id": secret_goal}
            )
            assert is_error and "secret" not in text.lower(), text
        text, is_error = await shown.run("decision_query", {"query": "goals"})
        assert not is_error and "Zebra secret goal" in text and "Zebra flipped goal" in text
    finally:
        await hidden.aclose()
        await shown.aclose()
        await workspace.shutdown()
