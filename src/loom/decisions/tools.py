"""The agent's decision tools: `decision_log` writes, `decision_query` reads.

Both reach the session's `DecisionRecorder` through `ctx.services.decisions` (the
session's assembly puts it there). Logging writes only Loom's own data, so neither tool asks for
permission (risk "read").
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from loom.core.decisions import EDGE_TYPES, NODE_STATUSES
from loom.decisions.recorder import DecisionRecorder, Logged
from loom.decisions.titles import SHOW_WIDTH, one_line
from loom.decisions.types import node_types
from loom.tools.base import ToolContext, ToolError, ToolResult
from loom.tools.builtin import BuiltinTool, schema

if TYPE_CHECKING:
    from loom.decisions.index import NodeRow

# The query's readers (pulse, narrative, export) load when a query asks for them: every
# session provides these tools, and a session's start-up never runs one.

QUERIES = ("goals", "recent", "pulse", "search", "node", "narrative")


def recorder_from(ctx: ToolContext) -> DecisionRecorder:
    recorder = ctx.services.decisions
    if not isinstance(recorder, DecisionRecorder):
        raise ToolError("the decision graph is not available in this session")
    return recorder


def _row(node: NodeRow) -> str:
    text = f"{node.id} [{node.node_type}] {one_line(node.title)} (confidence {node.confidence}"
    if node.status != "active":
        text += f", {node.status}"
    return text + ")"


class DecisionLog(BuiltinTool):
    name = "decision_log"
    kind = "think"
    description = (
        "Record for later sessions a goal, options, the decision (edge chosen/rejected "
        "from its option), actions, outcomes. `parent` links a new node (edge_type: "
        "leads_to, or it requires/supersedes the parent). `node_id` updates a node."
    )

    risk = "read"

    @property
    def parameters(self) -> dict[str, Any]:  # type: ignore[override]
        return schema({
            "type": {"type": "string", "enum": list(node_types()),
                     },
            "title": {"type": "string", "description": "One line."},
            "description": {"type": "string",
                            "description": "Why."},
            "confidence": {"type": "integer",
                           "description": "0-100, default 70."},
            "parent": {"type": "string",
                       "description": "Id or title."},
            "edge_type": {"type": "string", "enum": list(EDGE_TYPES)},
            "node_id": {"type": "string",
                        "description": "A node to update."},
            "status": {"type": "string", "enum": list(NODE_STATUSES)},
            "rationale": {"type": "string"},
        })  # fmt: skip

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        # confidence is range-checked by the recorder, with a message saying how
        kind = args.get("type") if isinstance(args, dict) else None
        if isinstance(kind, str) and kind not in node_types():
            raise ToolError(f"unknown node type {kind!r}; use one of: {', '.join(node_types())}")
        return await super().run(args, ctx)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        recorder = recorder_from(ctx)
        if args.get("node_id"):
            logged = await asyncio.to_thread(
                recorder.update,
                args["node_id"],
                status=args.get("status"),
                confidence=args.get("confidence"),
                rationale=args.get("rationale", ""),
            )
        else:
            if not args.get("type") or not args.get("title"):
                raise ToolError(
                    "a new node needs `type` and `title` (or pass `node_id` to update one)"
                )
            logged = await asyncio.to_thread(
                recorder.add,
                node_type=args["type"],
                title=args["title"],
                description=args.get("description", ""),
                confidence=args.get("confidence"),
                parent=args.get("parent"),
                edge_type=args.get("edge_type"),
            )
        return _logged_result(logged)


def _logged_result(logged: Logged) -> ToolResult:
    lines = []
    if logged.node is not None:
        title = one_line(logged.node.title, SHOW_WIDTH)
        lines.append(f"Logged {logged.node.node_type} {logged.node.id}: {title}")
    if logged.edge is not None:
        lines.append(f"Linked {logged.edge.from_id} --{logged.edge.edge_type}--> "
                     f"{logged.edge.to_id}")  # fmt: skip
    if logged.change is not None:
        what = ", ".join(
            f"{key} {value}"
            for key, value in (("status", logged.change.status),
                               ("confidence", logged.change.confidence))
            if value is not None
        )  # fmt: skip
        lines.append(f"Updated {logged.change.node_id}: {what}")
    metadata: dict[str, Any] = {}
    if logged.uncertain:
        lines.append(
            f"Confidence below 50: {len(logged.uncertain)} dependent node(s) are now "
            "uncertain: " + "; ".join(_row(n) for n in logged.uncertain)
        )
        metadata["uncertain"] = [n.id for n in logged.uncertain]
    if logged.node is not None:
        metadata["node_id"] = logged.node.id
    return ToolResult("\n".join(lines), metadata=metadata)


class DecisionQuery(BuiltinTool):
    name = "decision_query"
    kind = "search"
    description = (
        "Read the decision graph of all sessions: active goals, recent decisions, pulse "
        "(gaps, stale), search `text`, a node or a goal's narrative (`node_id`)."
    )
    risk = "read"
    parameters = schema({
        "query": {"type": "string", "enum": list(QUERIES)},
        "text": {"type": "string"},
        "node_id": {"type": "string"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
    }, required=("query",))  # fmt: skip

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        recorder = recorder_from(ctx)
        return ToolResult(await asyncio.to_thread(self._answer, recorder, args))

    def _answer(self, recorder: DecisionRecorder, args: dict[str, Any]) -> str:
        index = recorder.index()
        root = recorder.workspace_root
        query, limit = args["query"], args["limit"]
        if query == "goals":
            rows = index.nodes(workspace_root=root, types=["goal"], statuses=["active"],
                               limit=limit)  # fmt: skip
            return "\n".join(map(_row, rows)) or "No active goals."
        if query == "recent":
            rows = index.nodes(workspace_root=root, types=["decision"], limit=limit)
            return "\n".join(map(_row, rows)) or "No decisions yet."
        if query == "pulse":
            from loom.decisions.pulse import pulse, render_pulse

            return render_pulse(pulse(index, root))
        if query == "search":
            if not args.get("text"):
                raise ToolError("query=search needs `text`: the words to look for")
            rows = index.search(args["text"], workspace_root=root, limit=limit)
            return "\n".join(map(_row, rows)) or f"Nothing matches {args['text']!r}."
        node_id = args.get("node_id")
        if not node_id:
            raise ToolError(f"query={query} needs `node_id`")
        row = index.node(node_id)
        if row is None or (root and row.workspace_root != root):
            raise ToolError(f"no node {node_id!r}; find ids with query=goals, recent or search")
        if query == "narrative":
            from loom.decisions.narrative import goal_subgraph, narrative

            nodes = goal_subgraph(index, row.id)
            return narrative(nodes, index.edges(node_ids=[n.id for n in nodes]), row.title)
        lines = [_row(row)]
        if row.description:
            lines.append(row.description)
        for edge in index.edges(node_ids=[row.id]):
            other_id = edge.to_id if edge.from_id == row.id else edge.from_id
            other = index.node(other_id)
            arrow = "->" if edge.from_id == row.id else "<-"
            label = _row(other) if other is not None else other_id
            lines.append(f"  {arrow} {edge.edge_type} {label}")
        return "\n".join(lines)


def decision_tools() -> list[Any]:
    return [DecisionLog(), DecisionQuery()]


def provide(setup: Any) -> list[Any]:
    """The `loom.tools` provider: every session gets the decision tools (the session
    puts its recorder in the tool context; see loom.session.assembly.decisions_hook)."""
    return decision_tools()


def export_graph(recorder: DecisionRecorder, fmt: str) -> str:
    from loom.decisions.export import export

    index = recorder.index()
    nodes = index.nodes(workspace_root=recorder.workspace_root, newest_first=False)
    return export(nodes, index.edges(workspace_root=recorder.workspace_root), fmt)
