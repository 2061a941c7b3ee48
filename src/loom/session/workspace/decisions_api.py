"""`Workspace.decisions`: the project's decision graph for every face (list, show, pulse,
narrative, export, the web Graph tab). The index in loom.db is refreshed from the
thread files before each answer (one stat when nothing changed)."""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom.core.errors import BadInput, NotFound

if TYPE_CHECKING:
    from loom.decisions.index import DecisionIndex, EdgeRow, NodeRow
    from loom.decisions.pulse import Pulse
    from loom.paths import LoomPaths
    from loom.session.workspace.threads_api import ThreadsApi


@dataclass(frozen=True)
class NodeView:
    node: NodeRow
    links: list[tuple[str, EdgeRow, NodeRow | None]]  # ("parent" | "child", edge, other)
    uncertain: bool


def _serialised(method: Any) -> Any:
    """One call at a time: the SQLite connection is shared by the threads faces use."""

    @functools.wraps(method)
    def wrapper(self: DecisionsApi, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)

    return wrapper


class DecisionsApi:
    def __init__(self, paths: LoomPaths, project_root: Path, threads: ThreadsApi) -> None:
        self._lock = threading.RLock()
        self._paths = paths
        self._threads = threads
        self.scope = str(project_root)
        self._index: DecisionIndex | None = None

    def index(self) -> DecisionIndex:
        # faces call from worker threads (asyncio.to_thread), one at a time per face
        if self._index is None:
            from loom.decisions.index import DecisionIndex

            self._index = DecisionIndex.open(self._paths.database, check_same_thread=False)
        self._index.refresh(self._paths.threads_dir)
        return self._index

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None

    @_serialised
    def list(
        self,
        *,
        types: list[str] | None = None,
        statuses: list[str] | None = None,
        thread: str | None = None,
        limit: int | None = 50,
        all_projects: bool = False,
    ) -> list[NodeRow]:
        from loom.decisions.types import node_types

        unknown = [t for t in types or () if t not in node_types()]
        if unknown:
            raise BadInput(
                f"unknown node type {unknown[0]!r}", f"use one of: {', '.join(node_types())}"
            )
        thread_id = self._threads.resolve(thread) if thread else None
        return self.index().nodes(
            workspace_root=None if all_projects or thread_id else self.scope,
            types=types or (),
            statuses=statuses or (),
            thread_id=thread_id,
            limit=limit,
        )

    @_serialised
    def show(self, node_id: str) -> NodeView:
        from loom.decisions.graph import UNCERTAIN_BELOW

        index = self.index()
        node = index.node(node_id)
        if node is None:
            raise NotFound(f"no decision-graph node {node_id!r}", "list them with `loom decisions`")
        links = []
        for edge in index.edges(node_ids=[node.id]):
            if edge.from_id == node.id:
                links.append(("child", edge, index.node(edge.to_id)))
            else:
                links.append(("parent", edge, index.node(edge.from_id)))
        pulse = self.pulse()
        uncertain = node.confidence < UNCERTAIN_BELOW or node.id in pulse.uncertain
        return NodeView(node, links, uncertain)

    @_serialised
    def pulse(self) -> Pulse:
        from loom.decisions.pulse import pulse

        return pulse(self.index(), self.scope)

    @staticmethod
    def render_pulse(pulse: Pulse) -> str:
        from loom.decisions.pulse import render_pulse

        return render_pulse(pulse)

    @_serialised
    def narrative(self, *, thread: str | None = None, goal: str | None = None) -> str:
        from loom.decisions.narrative import goal_subgraph, narrative

        index = self.index()
        if goal is not None:
            row = index.node(goal)
            if row is None:
                raise NotFound(f"no decision-graph node {goal!r}", "list goals with "
                               "`loom decisions --type goal`")  # fmt: skip
            nodes = goal_subgraph(index, row.id)
            title = f"Goal {row.id}: {row.title}"
        else:
            if thread is None:
                raise BadInput("say whose story", "pass --thread ID or --goal ID")
            thread_id = self._threads.resolve(thread)
            nodes = index.nodes(thread_id=thread_id, newest_first=False)
            title = f"Thread {thread_id}"
        return narrative(nodes, index.edges(node_ids=[n.id for n in nodes]), title)

    @_serialised
    def export(self, fmt: str) -> str:
        from loom.decisions.export import FORMATS, export

        if fmt not in FORMATS:
            raise BadInput(f"unknown format {fmt!r}", f"use one of: {', '.join(FORMATS)}")
        index = self.index()
        nodes = index.nodes(workspace_root=self.scope, newest_first=False)
        return export(nodes, index.edges(workspace_root=self.scope), fmt)

    @_serialised
    def graph(self) -> tuple[list[NodeRow], list[EdgeRow]]:
        """Every node and edge of this project (for drawing)."""
        index = self.index()
        return (
            index.nodes(workspace_root=self.scope, newest_first=False),
            index.edges(workspace_root=self.scope),
        )
