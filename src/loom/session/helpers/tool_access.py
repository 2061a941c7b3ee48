"""Loom's tools and threads used directly, without a model: what `loom mcp serve` offers
another agent. The same tools, project confinement and permission policy as a session.

    access = ToolAccess(workspace, allow=("file_write",))
    verdict = access.check("shell", {"command": "ls"})    # Check(decision, reason)
    text, is_error = await access.run("file_read", {"path": "README.md"})
    access.search_threads("login bug"); access.show_thread("T-0193")
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from loom.decisions.recorder import DecisionRecorder
    from loom.session.workspace.workspace import Workspace

Decision = Literal["allow", "ask", "deny"]


@dataclass(frozen=True)
class ToolInfo:
    name: str
    description: str
    parameters: dict[str, Any]
    read_only: bool


@dataclass(frozen=True)
class Check:
    decision: Decision
    reason: str


SEARCH_WIDER = 10  # other projects' hits are dropped: ask the index for more
SEARCH_FLOOR = 200
LIST_PAGE = 500

# write into a session's thread, or start child sessions: there is no session here
SESSION_ONLY = ("decision_log", "task")


def _without(registry: Any, names: tuple[str, ...]) -> Any:
    from loom.tools.base import ToolRegistry

    return ToolRegistry(registry.get(name) for name in registry.names() if name not in names)


class ToolAccess:
    def __init__(
        self, workspace: Workspace, *, allow: Iterable[str] = (), include_private: bool = False
    ) -> None:
        """`allow`: tool names (globs) that run without asking, added to [permissions]
        auto_approve. `include_private`: the thread tools show this project's private
        threads too. SetupError on a malformed deny rule."""
        from loom.session.assembly.policy import permission_policy

        self.workspace = workspace
        self.include_private = include_private
        config = workspace.config
        allowed = [*config.permissions.auto_approve, *allow]
        config = config.model_copy(
            update={"permissions": config.permissions.model_copy(update={"auto_approve": allowed})}
        )
        root = workspace.project_root
        # The session's assembly: shell and git run in the same sandbox, and the same
        # policy (with the sandbox's rules on top) decides what runs, asks or is refused.
        self.setup, self.sandbox, registry = workspace.confined_tools(root, "mcp-serve")
        self.registry = _without(registry, SESSION_ONLY)
        self._decisions: DecisionRecorder | None = None
        self.policy = permission_policy(
            config, workspace.paths.database, root, sandbox=self.sandbox
        )
        from loom.session.runtime.options import known_secrets

        self.secrets = known_secrets(config)  # masked in every result, as in a session
        from loom.session.helpers.served_calls import ServedCalls

        defaults = workspace.session_defaults  # the person's hooks, checkpoints: a session's
        checkpointer = defaults.options.checkpointer
        if checkpointer is None and defaults.checkpoints is not None:
            checkpointer = defaults.checkpoints(root)
        self.served = ServedCalls(
            workspace.store, root, defaults.options.lifecycle_hooks, checkpointer
        )

    async def aclose(self) -> None:
        """Run the tool providers' cleanups (a language server an lsp tool started),
        then remove the commands' temp folder."""
        import asyncio
        import contextlib

        for cleanup in [*reversed(self.setup.cleanups), self.sandbox.close]:
            with contextlib.suppress(Exception):
                outcome = cleanup()
                if asyncio.iscoroutine(outcome):
                    await outcome

    def tools(self) -> list[ToolInfo]:
        return [
            ToolInfo(spec.name, spec.description, spec.parameters, self._read_only(spec.name))
            for spec in self.registry.specs()
        ]

    def _read_only(self, name: str) -> bool:
        return getattr(self.registry.get(name), "risk", "execute") == "read"

    def has(self, name: str) -> bool:
        return name in self.registry

    async def before(
        self, name: str, args: dict[str, Any]
    ) -> tuple[dict[str, Any], str | None, str | None]:
        """The person's PreToolUse hooks, as a session fires them before its permission
        check: (the arguments to go on with, the hooks' decision, a refusal text)."""
        return await self.served.before(name, args)

    def check(self, name: str, args: dict[str, Any], hook_decision: str | None = None) -> Check:
        """The permission policy's answer; `hook_decision` (a PreToolUse hook's) counts
        as in a session: "allow" skips only the question a grant would have skipped,
        "ask" asks where the policy allows, "deny" refuses."""
        from loom.session.runtime.permission_gate import only_a_grant_missing

        tool = self.registry.get(name)
        if hook_decision == "deny":
            return Check("deny", "a PreToolUse hook refused it")
        if hook_decision == "allow" and only_a_grant_missing(self.policy, tool, args):
            return Check("allow", "a PreToolUse hook allowed it")
        verdict = self.policy.check(tool, args)
        if hook_decision == "ask" and verdict.decision.value == "allow":
            return Check("ask", "a PreToolUse hook asks for your approval")
        return Check(verdict.decision.value, verdict.reason)

    def record(self, name: str, args: dict[str, Any], response: str) -> None:
        """A person's answer: allow_once, allow_always (saved grant) or deny."""
        self.policy.record(self.registry.get(name), args, response)

    async def run(self, name: str, args: dict[str, Any]) -> tuple[str, bool]:
        """Run a tool whose check allowed it; (text, is_error). Errors are results. As
        in a session: a checkpoint first when it can change files (`loom undo` takes it
        back), the PostToolUse hooks' feedback after."""
        from loom.core.errors import LoomError
        from loom.core.secrets import redact
        from loom.session.runtime.tool_runner import run_tool
        from loom.tools.base import ToolContext
        from loom.tools.services import ToolServices

        tool = self.registry.get(name)
        if tool is None:
            return f"There is no Loom tool named {name!r}.", True
        services = ToolServices(
            decisions=self._decision_reader() if name == "decision_query" else None
        )
        ctx = ToolContext(
            project_root=self.workspace.project_root, session_id="mcp-serve", services=services
        )

        async def execute(given: dict[str, Any]) -> tuple[str, bool]:
            result = await run_tool(tool, given, ctx, self.workspace.config.shell.timeout)
            return redact(result.content, self.secrets), result.is_error

        try:
            return await self.served.run(tool, args, execute)
        except LoomError as exc:  # its thread is locked (a `loom undo` right now)
            return f"{name} did not run: {exc}", True

    def _decision_reader(self) -> DecisionRecorder:
        """The project's decision graph, read-only: a recorder over an unsaved, empty
        thread (decision_log is not offered here: its entries would belong to no thread).
        Private threads' decisions stay out unless `include_private`, like the threads."""
        if self._decisions is None:
            from loom.core.thread import Thread
            from loom.decisions.recorder import DecisionRecorder

            root = str(self.workspace.project_root)
            self._decisions = DecisionRecorder(
                thread=Thread.new(workspace_root=root),
                database=self.workspace.paths.database,
                threads_dir=self.workspace.paths.threads_dir,
                hidden_threads=None if self.include_private else self.workspace.threads.private_ids,
            )
        return self._decisions

    # -- threads ------------------------------------------------------------------------

    # Only the served project's threads, and no private one unless `include_private`:
    # another agent sees what a session in this project could, never the rest.

    def search_threads(self, query: str, limit: int = 20) -> list[dict[str, Any]]:
        """Past conversations by title, branch, repo, commit SHA and text, with snippets.
        BadInput (a LoomError) for a query with no words."""
        hits = self.workspace.threads.search(query, max(limit * SEARCH_WIDER, SEARCH_FLOOR))
        shown = [hit for hit in hits if self._in_scope(hit.summary)][:limit]
        return [{**_summary(hit.summary), "snippet": hit.snippet} for hit in shown]

    def list_threads(self, limit: int = 200) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        offset = 0
        while len(found) < limit:
            page = self.workspace.threads.list(LIST_PAGE, offset)
            found += [_summary(row) for row in page if self._in_scope(row)]
            if len(page) < LIST_PAGE:
                break
            offset += LIST_PAGE
        return found[:limit]

    def show_thread(self, ref: str) -> str:
        """The thread as Markdown; NotFound (a LoomError) says what to do, the same
        for a thread of another project, a private one and one that does not exist."""
        from loom.core.errors import LoomError, NotFound
        from loom.core.export import thread_to_markdown
        from loom.core.secrets import redact

        missing = NotFound(f"no thread {ref.strip()[:80]!r} in this project")
        try:
            thread = self.workspace.threads.load(ref)
        except LoomError as exc:  # unknown, or a prefix of several (maybe elsewhere)
            raise missing from exc
        if not self._in_scope(thread):
            raise missing
        return redact(thread_to_markdown(thread), self.secrets)

    def _in_scope(self, thread: Any) -> bool:
        """A thread (or summary) of the served project that may be shown."""
        if thread.is_private and not self.include_private:
            return False
        return _under(thread.workspace_root, self.workspace.project_root)


def _under(root: str | None, project_root: Path) -> bool:
    """`root` (a thread's workspace_root, from its file: compared, never opened) is the
    project's folder or inside it."""
    if not root:
        return False
    path, project = PurePosixPath(root), PurePosixPath(project_root.resolve())
    return path == project or project in path.parents


def _summary(summary: Any) -> dict[str, Any]:
    return {
        "id": summary.id,
        "title": summary.title,
        "last_activity_at": summary.last_activity_at,
        "messages": summary.message_count,
        "git_branch": summary.git_branch,
        "git_remote_url": summary.git_remote_url,
        "workspace_root": summary.workspace_root,
    }
