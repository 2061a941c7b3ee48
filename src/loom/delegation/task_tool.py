"""`task`: hand a piece of work to a sub-agent, a child session with its own context.

The tool checks the call and says what agents there are; the session runs the child
(`ctx.services.subagents`, a `SubagentRunner`: loom.session assembles the child by
the same path as any session, with the parent's permissions and sandbox). The child's
final answer is this call's result, with the child's thread named, so the person can
open it. The call itself never asks: the child's own calls do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from loom.delegation.agents import GENERAL, AgentCatalog, AgentDefinition
from loom.tools.base import ToolContext, ToolError, ToolResult
from loom.tools.builtin import BuiltinTool, schema
from loom.tools.presentation import one_line

ISOLATIONS = ("worktree",)


@dataclass(frozen=True)
class TaskRequest:
    call_id: str  # the parent's call: the child records it, faces show progress under it
    description: str
    prompt: str
    agent: AgentDefinition
    isolation: str | None = None


@dataclass(frozen=True)
class TaskOutcome:
    text: str  # the child's final answer, or why it failed
    child_thread_id: str = ""
    is_error: bool = False
    notes: list[str] = field(default_factory=list)  # e.g. where a worktree child left changes


@runtime_checkable
class SubagentRunner(Protocol):
    async def run_task(self, request: TaskRequest, ctx: ToolContext) -> TaskOutcome: ...


class TaskTool(BuiltinTool):
    name = "task"
    kind = "think"  # a sub-agent's work: the agent thinking aloud

    def title(self, args: dict[str, Any]) -> str:
        what = one_line(str(args.get("description", "")))
        return f"{args.get('agent') or 'general'} sub-agent: {what}"

    risk = "read"  # no question for the call: every call the child makes is checked
    may_change_files = True  # ...yet the child may edit: a checkpoint before it runs

    def __init__(self, catalog: AgentCatalog, max_parallel: int, project_root: Any = None) -> None:
        super().__init__(project_root)
        self.catalog = catalog
        self.max_parallel = max_parallel

    @property
    def description(self) -> str:  # type: ignore[override]
        lines = [
            "A sub-agent (own context, your permissions) for research that would fill your "
            "context, or an independent part of a change. It sees only `prompt`, a full "
            "brief (goal, known facts, what to return); check its answer. Calls in one "
            f"answer run in parallel (max {self.max_parallel}); isolation 'worktree' gives "
            "each its own git branch. Agents (default general):",
        ]
        for agent in self.catalog.agents.values():
            where = "" if agent.source == "builtin" else f" ({agent.label})"
            lines.append(f"- {agent.name}: {agent.description}{where}")
        return "\n".join(lines)

    @property
    def parameters(self) -> dict[str, Any]:  # type: ignore[override]
        return schema(
            {
                "description": {"type": "string", "description": "3-6 words, shown."},
                "prompt": {"type": "string"},
                "agent": {"type": "string", "enum": self.catalog.names()},
                "isolation": {"type": "string", "enum": list(ISOLATIONS)},
            },
            required=("description", "prompt"),
        )

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        runner = ctx.services.subagents
        if not isinstance(runner, SubagentRunner):
            raise ToolError("sub-agents are not available here; do the work yourself")
        name = args.get("agent") or GENERAL
        agent = self.catalog.get(name)
        if agent is None:  # the schema's enum says the names; a model may still stray
            raise self.fail(f"there is no agent {name!r}; use one of {self.catalog.names()}")
        if not args["prompt"].strip():
            raise self.fail("`prompt` is empty: write the sub-agent's brief there")
        request = TaskRequest(
            call_id=ctx.call_id,
            description=" ".join(args["description"].split())[:120],
            prompt=args["prompt"],
            agent=agent,
            isolation=args.get("isolation"),
        )
        outcome = await runner.run_task(request, ctx)
        from loom.core.family import footer

        named = footer(agent.name, outcome.child_thread_id)  # loom show finds the child by it
        text = "\n\n".join([outcome.text.strip() or "(no answer)", *outcome.notes, named])
        metadata = {"child_thread_id": outcome.child_thread_id, "agent": agent.name}
        return ToolResult(text, is_error=outcome.is_error, metadata=metadata)
