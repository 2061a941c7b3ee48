"""Loom's tools and threads used directly, without a model: what `loom mcp serve` offers
another agent. The same tools, project confinement and permission policy as a session.

    access = ToolAccess.open(config, allow=("file_write",))
    verdict = access.check("shell", {"command": "ls"})    # Check(decision, reason)
    text, is_error = await access.run("file_read", {"path": "README.md"})
    access.threads.search("login bug")
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from loom.config import LoomConfig
from loom.paths import LoomPaths

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


class ToolAccess:
    def __init__(self, config: LoomConfig, registry: Any, policy: Any, threads: ThreadAccess):
        self.config = config
        self.registry = registry
        self.policy = policy
        self.threads = threads

    @classmethod
    def open(
        cls, config: LoomConfig, *, paths: LoomPaths | None = None, allow: Iterable[str] = ()
    ) -> ToolAccess:
        """`allow`: tool names (globs) that run without asking, like [permissions]
        auto_approve. Raises SetupError on a malformed deny rule."""
        from loom.session.factory import OpenOptions, build_policy
        from loom.store.factory import open_thread_store
        from loom.tools.defaults import default_registry

        paths = paths or LoomPaths.from_env()
        allowed = [*config.permissions.auto_approve, *allow]
        config = config.model_copy(
            update={"permissions": config.permissions.model_copy(update={"auto_approve": allowed})}
        )
        registry = default_registry(config.project_root, config)
        policy = build_policy(config, OpenOptions(paths=paths))
        store = open_thread_store(paths, config, background=False)
        return cls(config, registry, policy, ThreadAccess(store))

    def tools(self) -> list[ToolInfo]:
        return [
            ToolInfo(spec.name, spec.description, spec.parameters, self._read_only(spec.name))
            for spec in self.registry.specs()
        ]

    def _read_only(self, name: str) -> bool:
        return getattr(self.registry.get(name), "risk", "execute") == "read"

    def has(self, name: str) -> bool:
        return name in self.registry

    def check(self, name: str, args: dict[str, Any]) -> Check:
        verdict = self.policy.check(self.registry.get(name), args)
        return Check(verdict.decision.value, verdict.reason)

    def record(self, name: str, args: dict[str, Any], response: str) -> None:
        """A person's answer: allow_once, allow_always (saved grant) or deny."""
        self.policy.record(self.registry.get(name), args, response)

    async def run(self, name: str, args: dict[str, Any]) -> tuple[str, bool]:
        """Run a tool whose check allowed it; (text, is_error). Errors are results."""
        from loom.session.tool_runner import run_tool
        from loom.tools.base import ToolContext

        tool = self.registry.get(name)
        if tool is None:
            return f"There is no Loom tool named {name!r}.", True
        ctx = ToolContext(project_root=self.config.project_root, session_id="mcp-serve")
        result = await run_tool(tool, args, ctx, self.config.shell.timeout)
        return result.content, result.is_error

    def close(self) -> None:
        from loom.store.local import LocalThreadStore

        if not isinstance(self.threads.store, LocalThreadStore):
            self.threads.store.close()


class ThreadAccess:
    """Past conversations: search (title, branch, repo, commit, text; with snippets),
    show, list."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def search(self, query: str, limit: int = 20) -> list[dict[str, Any]]:
        return [
            {**_summary(hit.summary), "snippet": hit.snippet}
            for hit in self.store.search(query, limit)
        ]

    def list(self, limit: int = 50) -> list[dict[str, Any]]:
        return [_summary(summary) for summary in self.store.list(limit)]

    def show(self, ref: str, max_chars: int = 100_000) -> str:
        """The thread as readable text. Raises LookupError with what to do."""
        from loom.core.messages import message_text
        from loom.store.base import AmbiguousThreadId, ThreadNotFound

        try:
            thread = self.store.load(self.store.resolve(ref))
        except (ThreadNotFound, AmbiguousThreadId, ValueError) as exc:
            raise LookupError(f"{exc}; find the id with thread_search") from exc
        if thread is None:
            raise LookupError(f"no thread {ref!r}; find the id with thread_search")
        head = {
            "id": thread.id,
            "title": thread.metadata.title,
            "git_branch": thread.git_branch,
            "workspace_root": thread.workspace_root,
            "updated_at": thread.updated_at,
        }
        lines = [json.dumps(head, ensure_ascii=False)]
        for message in thread.conversation.messages:
            text = message_text(message)
            calls = getattr(message, "tool_calls", None) or []
            for call in calls:
                text += f"\n[calls {call.tool_name} {json.dumps(call.arguments_json)[:500]}]"
            lines.append(f"## {message.role}\n{text}")
        out = "\n\n".join(lines)
        if len(out) > max_chars:
            out = out[:max_chars] + f"\n[truncated at {max_chars} characters]"
        return out


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
