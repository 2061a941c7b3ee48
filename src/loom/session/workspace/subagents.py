"""Sub-agents: each `task` call runs a child session, assembled by `Workspace.start_session`
like any session, and answers with the child's final text.

The child is a thread of its own (it records its parent's thread and the call; the
parent's result names the child's thread), with its own context: the brief is its first
message. It has the parent's permission policy (its questions reach the person through
the parent's gate, `ParentGate`), the parent's sandbox rules, and at most the parent's
tools (an agent's `tools:` narrows them, `task` itself only below `[agents] max_depth`).
A general child sends what its parent sends first (the same tools in the same order,
`task` too, which refuses past the depth limit; the same system text and environment
snapshot; the same prompt cache key), so the parent's cached prefix serves it; its
brief comes in its first context block.
Several calls of one answer run at the same time, at most `[agents] max_parallel`.
Cancelling the parent's turn cancels its children; a child that fails or crashes is an
error result for the parent, never the parent's crash. Faces see the child on the
parent's topic: `subagent_status` when it starts and ends, `subagent_message` for each
of its messages, and `tool_progress` lines (what it is doing) under the task call.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, Literal, Protocol

from loom.core.errors import LoomError
from loom.core.events import Notice, SubagentMessage, SubagentStatus
from loom.delegation import TaskOutcome, TaskRequest
from loom.session.runtime.ports import TurnError

if TYPE_CHECKING:
    from loom.config import LoomConfig
    from loom.core.thread import Thread
    from loom.delegation import AgentDefinition
    from loom.paths import LoomPaths
    from loom.session.runtime.permission_gate import ParentGate
    from loom.session.runtime.session import Session
    from loom.session.workspace.spec import ParentLink, SessionSpec
    from loom.tools.base import ToolContext, ToolRegistry
    from loom.worktrees import Worktree

log = logging.getLogger(__name__)
ChildStatus = Literal["started", "completed", "failed", "cancelled"]

SUBAGENT_BRIEF = """\
# You are a sub-agent

Another agent gave you the task in the first message and waits for your answer; no
person reads along and nobody answers questions while you work. Do the task on your own
with your tools. Your final message is all the other agent receives: make it complete
and self-contained (what you found or changed, `path:line` references, what you could
not do or are unsure of). Do not ask for confirmation; do not stop before the task is
done or you are truly stuck."""
NO_GRANDCHILDREN = (
    "You cannot start sub-agents of your own here (the task tool refuses): do every part "
    "of the task yourself."
)
_DESCRIBE_KEYS = ("path", "command", "pattern", "query", "url", "name", "description")


class Sessions(Protocol):
    """What the runner needs of the Workspace (which imports this module)."""

    config: LoomConfig
    paths: LoomPaths

    async def start_session(
        self, spec: SessionSpec | None = None, *, fresh: Thread | None = None
    ) -> Session: ...

    async def stop_session(self, session_id: str) -> None: ...


class SubagentRunner:
    """A session's children (`ToolServices.subagents`, used by the task tool). Built
    before its session; `attach(session)` once that is built."""

    def __init__(self, workspace: Sessions, depth: int) -> None:
        self.workspace = workspace
        self.depth = depth  # the session's own: 0 for a person's session
        self.parent: Session | None = None  # the session it runs children for
        agents = workspace.config.agents
        self.max_depth = agents.max_depth
        self._slots = asyncio.Semaphore(agents.max_parallel)

    def attach(self, session: Session) -> None:
        self.parent = session

    async def run_task(self, request: TaskRequest, ctx: ToolContext) -> TaskOutcome:
        parent = self.parent
        if parent is None:
            return TaskOutcome("sub-agents are not available in this session", is_error=True)
        if self.depth >= self.max_depth:
            return TaskOutcome(
                f"A sub-agent cannot start sub-agents of its own here ([agents] max_depth is "
                f"{self.max_depth}); do this part yourself.",
                is_error=True,
            )
        try:
            tools = allowed_tools(request.agent, parent.tools, self.depth + 1 < self.max_depth)
        except ValueError as exc:
            return TaskOutcome(str(exc), is_error=True)
        async with self._slots:
            return await _Child(self, parent, request, ctx, tools).run()


# -- assembling a child (called by Workspace.start_session, the one assembly path) ----------


def link_thread(thread: Thread, parent: ParentLink) -> None:
    """The child's thread records its parent's thread, the call and the agent."""
    thread.parent_thread_id = parent.session.thread.id
    thread.parent_call_id = parent.call_id
    thread.agent = parent.agent or None


def narrowed(tools: ToolRegistry, spec: SessionSpec) -> ToolRegistry:
    """Only the tools `spec.tools` names; a parent's MCP tools (its servers keep running
    for it) join a child that may use them."""
    from loom.tools.base import ToolRegistry

    wanted = set(spec.tools or ())
    # in the order they were registered, as the parent has them: the same tool list
    # (the start of every request) lets the parent's cached prefix serve the child
    ordered = [t.name for t in tools.specs()]
    chosen = [tool for name in ordered if name in wanted and (tool := tools.get(name))]
    if spec.parent is not None:
        theirs = spec.parent.session.tools
        chosen += [theirs.get(t.name) for t in theirs.specs()
                   if t.name in wanted and t.name not in tools]  # fmt: skip
    return ToolRegistry(tool for tool in chosen if tool is not None)


def child_gate(parent: ParentLink | None, thread: Thread) -> ParentGate | None:
    """A child's gate: its questions go through its parent's; None for a person's session."""
    if parent is None:
        return None
    from loom.session.runtime.permission_gate import ParentGate, PermissionGate

    label = f"sub-agent {parent.agent or 'general'} ({thread.title})"
    asks = parent.session.gate
    if isinstance(asks, ParentGate):  # a grandchild asks where its parent asks
        asks = asks.parent
    assert isinstance(asks, PermissionGate)
    return ParentGate(asks, label)


def allowed_tools(agent: AgentDefinition, parent: ToolRegistry, may_delegate: bool) -> list[str]:
    """The child's tools: the agent's `tools:` (names or globs) among the parent's, without
    `task` below the depth limit; or all of the parent's, `task` too (the same tool list
    as the parent's, so its cached prefix serves the child; the runner refuses a `task`
    call past the depth limit, and the brief says so). ValueError names what a custom
    agent lists that does not exist."""
    from loom.delegation.agents import unknown_tools

    names = parent.names()
    if agent.tools is None:
        chosen = set(names)
    else:
        chosen = {name for name in names if any(fnmatchcase(name, p) for p in agent.tools)}
        unknown = unknown_tools(agent, names)
        if unknown:
            raise ValueError(
                f"agent {agent.name!r} ({agent.label}) lists tools that do not exist: "
                f"{', '.join(unknown)}. The tools are: {', '.join(names)}. Fix its `tools:` "
                "line, or use another agent"
            )
    if not may_delegate and agent.tools is not None:
        chosen.discard("task")
    return sorted(chosen)


class _Child:
    """One `task` call: start the child, relay what it does, stop it, report."""

    def __init__(
        self,
        runner: SubagentRunner,
        parent: Session,
        request: TaskRequest,
        ctx: ToolContext,
        tools: list[str],
    ) -> None:
        self.runner = runner
        self.parent = parent
        self.request = request
        self.ctx = ctx
        self.tools = tools
        self.child: Session | None = None
        self.worktree: Worktree | None = None

    @property
    def agent(self) -> AgentDefinition:
        return self.request.agent

    def _brief(self) -> str:
        runner = self.runner
        if "task" in self.tools and runner.depth + 1 >= runner.max_depth:
            return f"{SUBAGENT_BRIEF}\n\n{NO_GRANDCHILDREN}"
        return SUBAGENT_BRIEF

    async def run(self) -> TaskOutcome:
        from loom.session.workspace.spec import ParentLink, SessionSpec

        workspace, parent, agent = self.runner.workspace, self.parent, self.agent
        root = None
        if self.request.isolation == "worktree":
            from loom.worktrees import ensure

            try:
                name = f"task-{secrets.token_hex(3)}"
                self.worktree, _made = await asyncio.to_thread(
                    ensure, parent.project_root, name, workspace.paths.data
                )
            except LoomError as exc:
                return TaskOutcome(f"No worktree for the sub-agent: {exc}", is_error=True)
            root = self.worktree.path
        spec = SessionSpec(
            model=agent.model or parent.model,
            effort=agent.effort or parent.effort,
            private=parent.thread.is_private,
            cwd=root or parent.options.cwd or parent.project_root,
            title=self.request.description,
            parent=ParentLink(parent, self.request.call_id, agent.name, self.runner.depth + 1),
            tools=self.tools,
            system_base=agent.prompt or None,
            brief=self._brief(),
            root=root,
        )
        try:
            self.child = child = await workspace.start_session(spec)
        except Exception as exc:  # SetupError (a bad model in the agent file), Busy, a bug
            await self._drop_worktree()
            return TaskOutcome(f"The sub-agent could not start: {exc}", is_error=True)
        if self.worktree is not None:
            child.thread.worktree = self.worktree.as_record()
        self._status("started")
        unsubscribe = child.subscribe(self._relay)
        status: ChildStatus = "completed"
        detail = ""
        try:
            answer = await child.send_message(self.request.prompt)
            outcome = TaskOutcome(answer, child.thread.id)
        except asyncio.CancelledError:
            status = "cancelled"
            raise
        except TurnError as exc:
            status, detail = "failed", str(exc)
            outcome = TaskOutcome(
                f"The sub-agent failed: {exc}. What it did so far is in its thread.",
                child.thread.id,
                is_error=True,
            )
        except Exception as exc:  # a bug in the child's run: an error for the parent only
            log.exception("sub-agent %s crashed", child.id)
            status, detail = "failed", f"{type(exc).__name__}: {exc}"
            outcome = TaskOutcome(f"The sub-agent crashed ({detail}).", child.thread.id,
                                  is_error=True)  # fmt: skip
        finally:
            unsubscribe()
            with contextlib.suppress(Exception):
                await workspace.stop_session(child.id)  # answers open calls, saves
            notes = await self._settle_worktree()
            last = child.last_turn
            if status == "completed" and last is not None and last.interrupted:
                status = "cancelled"  # stopped from outside (its own face, a shutdown)
            self._status(status, detail or " ".join(notes))
        return TaskOutcome(outcome.text, outcome.child_thread_id, outcome.is_error, notes)

    # -- what the parent's faces see ------------------------------------------------------

    def _status(self, status: ChildStatus, detail: str = "") -> None:
        child = self.child
        if child is None:
            return
        self.parent.publish(
            SubagentStatus(
                session_id=self.parent.id,
                call_id=self.request.call_id,
                child_session_id=child.id,
                child_thread_id=child.thread.id,
                agent=self.agent.name,
                description=self.request.description,
                status=status,
                detail=detail,
            )
        )

    def _relay(self, event: Any) -> None:
        child, kind = self.child, getattr(event, "type", "")
        if child is None:
            return
        if kind == "new_message":
            usage = getattr(event.message, "usage", None)
            if usage is not None:  # the parent's total (/cost, the toolbar) counts it
                self.parent.count_usage(usage)
            self.parent.publish(
                SubagentMessage(
                    session_id=self.parent.id,
                    call_id=self.request.call_id,
                    child_thread_id=child.thread.id,
                    message=event.message,
                )
            )
        elif kind == "tool_executing":
            self._progress(_describe(event.tool_name, event.arguments))
        elif kind == "session_status" and event.status == "thinking":
            self._progress("thinking")
        elif kind == "notice":
            source = f"sub-agent {self.agent.name}: {event.source}".rstrip(": ")
            notice = Notice(session_id=self.parent.id, level=event.level, source=source,
                            text=event.text)  # fmt: skip
            self.parent.publish(notice)

    def _progress(self, text: str) -> None:
        progress = self.ctx.progress
        if progress is not None:
            outcome = progress(None, f"{self.agent.name}: {text}")
            if asyncio.iscoroutine(outcome):
                outcome.close()  # the session's progress callback is synchronous

    # -- a worktree child's changes -------------------------------------------------------

    async def _settle_worktree(self) -> list[str]:
        """Keep a worktree with changes (and say where); drop one without."""
        worktree = self.worktree
        if worktree is None:
            return []
        from loom.worktrees import changed

        try:
            kept = await asyncio.to_thread(changed, worktree, worktree.head or None)
        except Exception:  # cannot tell: keep it, the person decides
            kept = True
        if not kept:
            await self._drop_worktree()
            return ["(The sub-agent changed nothing; its worktree was removed.)"]
        from loom.worktrees import commit_work

        message = f"loom: sub-agent {self.agent.name}: {self.request.description}"[:200]
        try:
            made = await asyncio.to_thread(commit_work, worktree, message)
        except LoomError as exc:
            return [
                f"Its changes are left uncommitted in {worktree.path} ({exc}): commit them "
                f"there (`git -C {worktree.path} add -A && git -C {worktree.path} commit`), "
                f"then `loom worktree merge {worktree.name}`."
            ]
        committed = f"committed as {made[:12]} " if made else ""
        return [
            f"Its changes are {committed}on branch {worktree.branch} in {worktree.path} (not "
            f"in your working tree): see them with `loom worktree diff {worktree.name}`, "
            f"merge them with `loom worktree merge {worktree.name}` (or `git merge "
            f"{worktree.branch}`), then `loom worktree remove {worktree.name}`."
        ]

    async def _drop_worktree(self) -> None:
        worktree = self.worktree
        if worktree is None:
            return
        from loom.worktrees import remove

        data = self.runner.workspace.paths.data
        with contextlib.suppress(Exception):
            await asyncio.to_thread(remove, worktree.repo, worktree.name, data,
                                    delete_branch=True)  # fmt: skip


def _describe(tool_name: str, arguments: dict[str, Any]) -> str:
    for key in _DESCRIBE_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value:
            line = " ".join(value.split())
            return f"{tool_name} {line[:80]}"
    return tool_name
