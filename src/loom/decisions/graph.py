"""The project-wide decision graph in memory: every thread's nodes with changes applied.

Built from `DecisionLog`s (one per thread) or from the index's rows. Edges point from a
parent to a child: `goal --leads_to--> decision`, `X --requires--> Y` reads "Y requires
X". Confidence flows downstream: when a node drops below `UNCERTAIN_BELOW`, every node
reachable from it along `requires`/`blocks` edges (depth `CASCADE_DEPTH`) is uncertain.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from loom.core.decisions import DecisionEdge, DecisionLog, DecisionNode, NodeChange

UNCERTAIN_BELOW = 50
CASCADE_DEPTH = 5
CASCADE_EDGES = frozenset({"requires", "blocks"})


@dataclass
class DecisionGraph:
    nodes: dict[str, DecisionNode] = field(default_factory=dict)
    edges: list[DecisionEdge] = field(default_factory=list)
    updated_at: dict[str, str] = field(default_factory=dict)  # node id -> last change time

    @classmethod
    def from_logs(cls, logs: Iterable[tuple[str, DecisionLog]]) -> DecisionGraph:
        """(thread id, log) pairs -> one graph; changes apply in time order."""
        graph = cls()
        changes: list[NodeChange] = []
        seen_edges: set[str] = set()
        for thread_id, log in logs:
            for node in log.nodes:
                if node.id not in graph.nodes:
                    graph.nodes[node.id] = node.model_copy(
                        update={"thread_id": node.thread_id or thread_id}
                    )
                    graph.updated_at[node.id] = node.created_at
            for edge in log.edges:
                if edge.change_id not in seen_edges:
                    seen_edges.add(edge.change_id)
                    graph.edges.append(edge)
            changes.extend(log.changes)
        for change in sorted(changes, key=lambda c: c.at):
            graph.apply(change)
        return graph

    def apply(self, change: NodeChange) -> None:
        node = self.nodes.get(change.node_id)
        if node is None:
            return  # the node's thread is not in this graph (deleted, another project)
        update: dict[str, object] = {}
        if change.status is not None:
            update["status"] = change.status
        if change.confidence is not None:
            update["confidence"] = change.confidence
        self.nodes[node.id] = node.model_copy(update=update)
        self.updated_at[node.id] = max(self.updated_at.get(node.id, ""), change.at)

    # -- structure -----------------------------------------------------------------

    def children(self, node_id: str) -> list[tuple[DecisionEdge, DecisionNode]]:
        return [
            (e, self.nodes[e.to_id])
            for e in self.edges
            if e.from_id == node_id and e.to_id in self.nodes
        ]

    def parents(self, node_id: str) -> list[tuple[DecisionEdge, DecisionNode]]:
        return [
            (e, self.nodes[e.from_id])
            for e in self.edges
            if e.to_id == node_id and e.from_id in self.nodes
        ]

    def dependants(self, node_id: str, depth: int = CASCADE_DEPTH) -> list[str]:
        """Nodes downstream of `node_id` along requires/blocks edges, nearest first."""
        out: dict[str, list[str]] = defaultdict(list)
        for edge in self.edges:
            if edge.edge_type in CASCADE_EDGES:
                out[edge.from_id].append(edge.to_id)
        found: list[str] = []
        seen = {node_id}
        queue = deque([(node_id, 0)])
        while queue:
            current, level = queue.popleft()
            if level == depth:
                continue
            for child in out.get(current, ()):
                if child not in seen and child in self.nodes:
                    seen.add(child)
                    found.append(child)
                    queue.append((child, level + 1))
        return found

    def uncertain(self) -> set[str]:
        """Nodes whose own confidence, or an upstream node's, is below the threshold."""
        marked: set[str] = set()
        for node in self.nodes.values():
            if node.status == "active" and node.confidence < UNCERTAIN_BELOW:
                marked.add(node.id)
                marked.update(self.dependants(node.id))
        return marked

    def supersedes_cycle(self, from_id: str, to_id: str) -> bool:
        """Would a new `from_id --supersedes--> to_id` edge close a cycle of supersedes?"""
        out: dict[str, list[str]] = defaultdict(list)
        for edge in self.edges:
            if edge.edge_type == "supersedes":
                out[edge.from_id].append(edge.to_id)
        stack, seen = [to_id], set()
        while stack:
            current = stack.pop()
            if current == from_id:
                return True
            if current not in seen:
                seen.add(current)
                stack.extend(out.get(current, ()))
        return False

    def neighbourhood(self, node_id: str) -> list[tuple[str, DecisionEdge, DecisionNode]]:
        """("parent" | "child", edge, node) for every node linked to `node_id`."""
        return [("parent", e, n) for e, n in self.parents(node_id)] + [
            ("child", e, n) for e, n in self.children(node_id)
        ]

    def by_type(self, *types: str, status: str | None = "active") -> list[DecisionNode]:
        nodes = [
            n
            for n in self.nodes.values()
            if n.node_type in types and (status is None or n.status == status)
        ]
        return sorted(nodes, key=lambda n: self.updated_at.get(n.id, n.created_at), reverse=True)
