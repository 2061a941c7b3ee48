"""The decision graph as a thread stores it: nodes, edges and changes one session logged.

A session's goals, decisions, options, actions, outcomes and lessons are saved in its
own thread file (field `decision_graph`), so they are crash-safe and sync exactly like
the conversation. A change to a node another thread owns (superseding it, lowering its
confidence) is recorded as a `NodeChange` in the thread that makes it; the project-wide
index (`loom.decisions.index`) applies changes in time order. Nothing here rewrites
another thread's file.

Every record has a `change_id` (a uuid) so merging two copies of a thread is idempotent.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from loom.core.clock import now_iso

BUILTIN_NODE_TYPES = (
    "goal",
    "decision",
    "option",
    "action",
    "outcome",
    "observation",
    "revisit",
)
EDGE_TYPES = ("leads_to", "chosen", "rejected", "requires", "blocks", "enables", "supersedes")
NODE_STATUSES = ("active", "superseded", "abandoned")
NodeStatus = Literal["active", "superseded", "abandoned"]
NODE_ID_PREFIX = "D-"


def new_change_id() -> str:
    import uuid_utils  # start-up paths never need it

    return str(uuid_utils.uuid7())


def new_node_id() -> str:
    """`D-` and 12 hex digits of a uuidv7: short enough for a model to repeat."""
    import uuid_utils

    return f"{NODE_ID_PREFIX}{uuid_utils.uuid7().hex[-12:]}"


class _Record(BaseModel):
    # built on first use: a run that records no decision never pays for the validators
    model_config = ConfigDict(extra="allow", populate_by_name=True, defer_build=True)


class DecisionNode(_Record):
    id: str = Field(default_factory=new_node_id)
    change_id: str = Field(default_factory=new_change_id)
    node_type: str
    title: str
    description: str = ""
    status: NodeStatus = "active"
    confidence: int = Field(default=70, ge=0, le=100)
    metadata: dict[str, Any] = Field(default_factory=dict)  # branch, commit, files, ...
    thread_id: str = ""
    created_at: str = Field(default_factory=now_iso)


class DecisionEdge(_Record):
    model_config = ConfigDict(
        extra="allow", populate_by_name=True, serialize_by_alias=True, defer_build=True
    )

    from_id: str = Field(alias="from")
    to_id: str = Field(alias="to")
    edge_type: str
    weight: float = 1.0
    rationale: str = ""
    change_id: str = Field(default_factory=new_change_id)
    created_at: str = Field(default_factory=now_iso)


class NodeChange(_Record):
    """A later change to a node (this thread's or another's): new status or confidence."""

    change_id: str = Field(default_factory=new_change_id)
    node_id: str
    status: NodeStatus | None = None
    confidence: int | None = Field(default=None, ge=0, le=100)
    rationale: str = ""
    at: str = Field(default_factory=now_iso)


class DecisionLog(_Record):
    nodes: list[DecisionNode] = Field(default_factory=list)
    edges: list[DecisionEdge] = Field(default_factory=list)
    changes: list[NodeChange] = Field(default_factory=list)

    def is_empty(self) -> bool:
        return not (self.nodes or self.edges or self.changes)

    def merge(self, other: DecisionLog) -> DecisionLog:
        """The union of two copies of one thread's log, by change_id (idempotent)."""

        def union(mine: list[Any], theirs: list[Any]) -> list[Any]:
            seen = {item.change_id for item in mine}
            return [*mine, *(item for item in theirs if item.change_id not in seen)]

        return DecisionLog(
            nodes=union(self.nodes, other.nodes),
            edges=union(self.edges, other.edges),
            changes=union(self.changes, other.changes),
        )
