"""`loom mcp serve` offers decision_query over the project's graph (read-only); it does
not offer decision_log, whose entries would belong to no thread."""

from __future__ import annotations

import os
from pathlib import Path

from loom.core.decisions import DecisionLog, DecisionNode
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
