"""One session's pen on the decision graph: validates what the model logs and records it in
the session's own thread, and answers queries from the project-wide index.

The recorder never writes another thread's file: superseding or re-rating a node that
another thread owns is a `NodeChange` in this thread, which the index applies.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loom.core.decisions import (
    EDGE_TYPES,
    NODE_STATUSES,
    DecisionEdge,
    DecisionLog,
    DecisionNode,
    NodeChange,
)
from loom.decisions.index import DecisionIndex, NodeRow, graph_scope
from loom.decisions.types import node_types
from loom.tools.base import ToolError


def _locked(method: Callable[..., Logged]) -> Callable[..., Logged]:
    @functools.wraps(method)
    def wrapper(self: DecisionRecorder, *args: Any, **kwargs: Any) -> Logged:
        with self.lock:
            return method(self, *args, **kwargs)

    return wrapper


class DecisionInputError(ToolError):
    """The model called a decision tool wrongly; the message says how to call it right."""


@dataclass
class Logged:
    node: DecisionNode | None = None
    edge: DecisionEdge | None = None
    change: NodeChange | None = None
    uncertain: list[NodeRow] = field(default_factory=list)  # the confidence cascade


class DecisionRecorder:
    def __init__(
        self,
        *,
        thread: Any,  # the session's Thread (its decision_graph field is written)
        database: Path,
        threads_dir: Path,
        on_change: Callable[[], None] = lambda: None,
        on_cascade: Callable[[NodeRow, list[NodeRow]], None] = lambda node, rows: None,
        git_meta: Callable[[], dict[str, Any]] = dict,
        hidden_threads: Callable[[], frozenset[str]] | None = None,
    ) -> None:
        """`hidden_threads()`: threads whose nodes its reads leave out (a reader that
        must not show private threads' decisions: `loom mcp serve`)."""
        self.thread = thread
        self.database = database
        self.threads_dir = threads_dir
        self.on_change = on_change
        self.on_cascade = on_cascade
        self.git_meta = git_meta
        self.hidden_threads = hidden_threads
        # tools and the context builder call in from worker threads
        self.lock = threading.RLock()

    # -- the index, fresh, with this session's unsaved entries ---------------------------

    def index(self) -> DecisionIndex:
        """The calling thread's index (its connection is shared with every recorder on
        that thread: a session holds no database handle of its own), fresh."""
        with self.lock:
            index = DecisionIndex.for_this_thread(self.database)
            index.refresh(self.threads_dir)
            index.put_thread(self.thread.id, self.workspace_root, self.log)
            if self.hidden_threads is not None:
                index.hidden_threads = self.hidden_threads()
            return index

    def _append(self, kind: str, item: Any) -> None:
        # a new list, not an append: a save serialising the thread on its own thread
        # sees the old list or the new one, never one that changes under it
        setattr(self.log, kind, [*getattr(self.log, kind), item])

    @property
    def workspace_root(self) -> str | None:
        """The project whose graph this thread's decisions join (a worktree's repository)."""
        return graph_scope(self.thread.workspace_root, getattr(self.thread, "worktree", None))

    @property
    def log(self) -> DecisionLog:
        return self.thread.decision_graph

    # -- writing -------------------------------------------------------------------------

    @_locked
    def add(
        self,
        *,
        node_type: str,
        title: str,
        description: str = "",
        confidence: int | None = None,
        parent: str | None = None,
        edge_type: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Logged:
        types = node_types()
        if node_type not in types:
            raise DecisionInputError(
                f"unknown node type {node_type!r}; use one of: {', '.join(types)}"
            )
        title = (title or "").strip()
        if not title:
            raise DecisionInputError("title is required: a short line naming the node")
        confidence = _confidence(70 if confidence is None else confidence)
        index = self.index()
        parent_row = self._existing(index, parent) if parent else None
        edge_type = edge_type or ("leads_to" if parent else None)
        if edge_type is not None and parent is None:
            raise DecisionInputError("edge_type needs a parent: the id of the node it links from")
        if edge_type is not None and edge_type not in EDGE_TYPES:
            raise DecisionInputError(
                f"unknown edge type {edge_type!r}; use one of: {', '.join(EDGE_TYPES)}"
            )
        meta = {**self.git_meta(), **(metadata or {})}
        node = DecisionNode(
            node_type=node_type,
            title=title,
            description=description or "",
            confidence=confidence,
            metadata=meta,
            thread_id=self.thread.id,
        )
        logged = Logged(node=node)
        self._append("nodes", node)
        if parent_row is not None and edge_type is not None:
            # edges point from parent to child; "supersedes" reads child supersedes parent
            logged.edge = DecisionEdge.model_validate(
                {"from": parent_row.id, "to": node.id, "edge_type": edge_type}
            )
            self._append("edges", logged.edge)
            if edge_type == "supersedes":
                logged.change = NodeChange(
                    node_id=parent_row.id, status="superseded", rationale=f"by {node.id}"
                )
                self._append("changes", logged.change)
        self.on_change()
        return logged

    @_locked
    def link(self, from_id: str, to_id: str, edge_type: str, rationale: str = "") -> Logged:
        if edge_type not in EDGE_TYPES:
            raise DecisionInputError(
                f"unknown edge type {edge_type!r}; use one of: {', '.join(EDGE_TYPES)}"
            )
        index = self.index()
        source, target = self._existing(index, from_id), self._existing(index, to_id)
        if source.id == target.id:
            raise DecisionInputError("a node cannot link to itself")
        if edge_type == "supersedes" and _closes_cycle(index, target.id, source.id):
            raise DecisionInputError(
                f"{target.id} already (indirectly) supersedes {source.id}: a cycle of "
                "supersedes has no newest node; mark the older one abandoned instead"
            )
        edge = DecisionEdge.model_validate(
            {"from": source.id, "to": target.id, "edge_type": edge_type, "rationale": rationale}
        )
        self._append("edges", edge)
        logged = Logged(edge=edge)
        if edge_type == "supersedes":
            logged.change = NodeChange(
                node_id=source.id, status="superseded", rationale=f"by {target.id}"
            )
            self._append("changes", logged.change)
        self.on_change()
        return logged

    @_locked
    def update(
        self,
        node_id: str,
        *,
        status: str | None = None,
        confidence: int | None = None,
        rationale: str = "",
    ) -> Logged:
        if status is None and confidence is None:
            raise DecisionInputError("give a new status or confidence to update a node")
        if status is not None and status not in NODE_STATUSES:
            raise DecisionInputError(
                f"unknown status {status!r}; use one of: {', '.join(NODE_STATUSES)}"
            )
        if confidence is not None:
            confidence = _confidence(confidence)
        index = self.index()
        row = self._existing(index, node_id)
        change = NodeChange(
            node_id=row.id, status=status, confidence=confidence, rationale=rationale
        )
        self._append("changes", change)
        logged = Logged(change=change)
        from loom.decisions.graph import CASCADE_DEPTH, CASCADE_EDGES, UNCERTAIN_BELOW

        if confidence is not None and confidence < UNCERTAIN_BELOW <= row.confidence:
            index = self.index()
            logged.uncertain = _downstream_rows(index, row.id, CASCADE_EDGES, CASCADE_DEPTH)
        self.on_change()
        if logged.uncertain:
            self.on_cascade(index.node(row.id) or row, logged.uncertain)
        return logged

    def _existing(self, index: DecisionIndex, node_id: str | None) -> NodeRow:
        """A node of this project by id, unique id prefix, or exact title."""
        row = index.node(node_id or "")
        if row is None and node_id:
            row = index.node_titled(node_id, workspace_root=self.workspace_root)
        if row is None or (self.workspace_root and row.workspace_root != self.workspace_root):
            raise DecisionInputError(
                f"no node {node_id!r} in this project's decision graph (give a node's id or "
                "its exact title); find ids with decision_query (goals, recent, search)"
            )
        return row


def _confidence(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DecisionInputError("confidence must be a whole number from 0 to 100")
    if not 0 <= value <= 100:
        raise DecisionInputError(
            f"confidence {value} is out of range: use 0 (a guess) to 100 (certain)"
        )
    return int(value)


def _closes_cycle(index: DecisionIndex, start: str, goal: str) -> bool:
    """Is `goal` reachable from `start` along supersedes edges?"""
    stack, seen = [start], set()
    while stack:
        current = stack.pop()
        if current == goal:
            return True
        if current in seen:
            continue
        seen.add(current)
        stack.extend(
            e.to_id
            for e in index.edges(node_ids=[current])
            if e.edge_type == "supersedes" and e.from_id == current
        )
    return False


def _downstream_rows(
    index: DecisionIndex, node_id: str, kinds: frozenset[str], depth: int
) -> list[NodeRow]:
    found: list[NodeRow] = []
    seen = {node_id}
    frontier = [node_id]
    for _ in range(depth):
        if not frontier:
            break
        edges = index.edges(node_ids=frontier)
        nxt = [
            e.to_id
            for e in edges
            if e.edge_type in kinds and e.from_id in frontier and e.to_id not in seen
        ]
        for child in dict.fromkeys(nxt):
            seen.add(child)
            row = index.node(child)
            if row is not None:
                found.append(row)
        frontier = list(dict.fromkeys(nxt))
    return found
