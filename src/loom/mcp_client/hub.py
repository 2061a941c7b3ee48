"""The MCP servers of one session: started concurrently in the background, their tools
added to the session's registry as each becomes ready, all stopped with the session.

    hub = McpHub(specs, registry, settings=config.mcp, log_dir=..., approvals=...)
    hub.start()                      # returns at once; a slow server delays nothing
    await hub.wait_ready(timeout)    # optional: before the first model call
    await hub.aclose()               # no orphan processes

Problems are one line each (which server, what happened, what to do), handed to
`on_notice` and kept in `hub.notices`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loom.config import McpSection
from loom.mcp_client.approvals import ApprovalStore
from loom.mcp_client.connection import McpConnectError, ServerConnection
from loom.mcp_client.results import result_text
from loom.mcp_client.specs import ServerSpec
from loom.mcp_client.tools import McpTool, McpToolSchema
from loom.tools.base import ToolContext, ToolRegistry, ToolResult

log = logging.getLogger(__name__)


@dataclass
class ServerStatus:
    name: str
    state: str  # disabled, needs approval, invalid, connecting, ready, exited, failed, stopped
    tools: int
    tokens: int
    detail: str  # what it runs, or why it is not running
    origin: str
    # everything it runs with (command, args, cwd, env and headers masked): for approval
    details: list[str] = field(default_factory=list)


class McpHub:
    def __init__(
        self,
        specs: Iterable[ServerSpec],
        registry: ToolRegistry,
        *,
        settings: McpSection,
        log_dir: Path,
        approvals: ApprovalStore | None = None,
        on_notice: Callable[[str], None] | None = None,
        pass_env: Iterable[str] = (),
        face_asks_approval: bool = False,
        project_root: Path | None = None,
    ) -> None:
        self.face_asks_approval = face_asks_approval
        self.project_root = project_root
        self.pass_env = tuple(pass_env)  # [shell] pass_env: secrets servers may inherit
        self.specs = {spec.name: spec for spec in specs}
        self.registry = registry
        self.settings = settings
        self.log_dir = log_dir
        self.approvals = approvals
        self.on_notice = on_notice
        self.notices: list[str] = []
        self.connections: dict[str, ServerConnection] = {}
        self.blocked: dict[str, tuple[str, str]] = {}  # name -> (state, why)
        self._tools: dict[str, McpTool] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self.compact = False
        _quiet_sdk_logs()

    # -- starting ----------------------------------------------------------------------

    def start(self) -> None:
        """Begin connecting to every runnable server; returns at once."""
        for spec in self.specs.values():
            why = self._blocked_reason(spec)
            if why is not None:
                self.blocked[spec.name] = why
                asked = why[0] == "needs approval" and self.face_asks_approval
                if why[0] in ("invalid", "needs approval") and not asked:
                    self.notice(f"MCP server {spec.name!r} not started: {why[1]}")
                continue
            self._launch(spec)

    def _launch(self, spec: ServerSpec) -> None:
        connection = ServerConnection(
            spec,
            startup_timeout=self.settings.startup_timeout,
            log_dir=self.log_dir,
            pass_env=self.pass_env,
            cwd=self._working_folder(spec),
        )
        self.connections[spec.name] = connection
        self._tasks.append(asyncio.create_task(self._connect(connection)))

    def _working_folder(self, spec: ServerSpec) -> Path:
        """Where a stdio server starts when its entry names no `cwd`: a project's own
        server in the project (its entry is written for it); the person's servers in an
        empty folder of Loom's, never the project, where `python -m PKG` would import a
        `PKG.py` a sandboxed command left there, on the host."""
        if spec.origin == "project" and self.project_root is not None:
            return self.project_root
        neutral = self.log_dir / "workdir"
        neutral.mkdir(parents=True, exist_ok=True)
        return neutral

    def awaiting_approval(self) -> list[ServerSpec]:
        """Project-defined servers this session did not start: never approved."""
        return [
            self.specs[name]
            for name, (state, _why) in self.blocked.items()
            if state == "needs approval"
        ]

    def approve(self, name: str) -> ServerSpec:
        """The person trusts the project's server `name`: remember it (later sessions
        start it too) and start it now; its tools join as it becomes ready. KeyError
        if this session holds no server of that name waiting for approval."""
        if self.blocked.get(name, ("",))[0] != "needs approval":
            raise KeyError(name)
        spec = self.specs[name]
        if self.approvals is not None:
            self.approvals.approve(spec)
        del self.blocked[name]
        self._launch(spec)
        return spec

    def _blocked_reason(self, spec: ServerSpec) -> tuple[str, str] | None:
        if spec.problem is not None:
            return "invalid", spec.problem
        if not spec.enabled:
            return "disabled", "enabled = false"
        if self.approvals is not None and not self.approvals.is_approved(spec):
            return "needs approval", (
                f"the project ({spec.source}) defines it to run `{spec.describe()}`; "
                f"run `loom mcp approve {spec.name}` if you trust it"
            )
        return None

    async def _connect(self, connection: ServerConnection) -> None:
        try:
            await connection.ensure()
        except McpConnectError as exc:
            self.notice(str(exc))
            return
        self._register(connection)

    def _register(self, connection: ServerConnection) -> None:
        for remote in connection.tools:
            tool = McpTool(self, connection.spec.name, remote)
            if tool.name in self._tools or tool.name in self.registry:
                self.notice(
                    f"MCP server {connection.spec.name!r}: tool {remote.name!r} skipped, its "
                    f"name {tool.name} is already taken"
                )
                continue
            self._tools[tool.name] = tool
            self.registry.register(tool)
        self._check_budget()

    def _check_budget(self) -> None:
        """Offer the tools compactly once their full definitions exceed the budget."""
        if self.compact:
            return
        if self.full_tokens() > self.settings.tool_tokens:
            self.compact = True
            if McpToolSchema.name not in self.registry:
                self.registry.register(McpToolSchema(self))

    def full_tokens(self, server: str | None = None) -> int:
        from loom.llm.tokens import estimate_tokens

        return sum(
            estimate_tokens(tool.full_spec_json())
            for tool in self._tools.values()
            if server is None or tool.server == server
        )

    async def wait_ready(self, timeout: float | None = None) -> None:
        """Wait (at most `timeout` seconds) for the servers still connecting."""
        pending = [task for task in self._tasks if not task.done()]
        if pending:
            await asyncio.wait(pending, timeout=timeout)

    def notice(self, line: str) -> None:
        self.notices.append(line)
        log.info("%s", line)
        if self.on_notice is not None:
            self.on_notice(line)

    # -- using -------------------------------------------------------------------------

    def tool(self, name: str) -> McpTool | None:
        return self._tools.get(name)

    def tool_names(self) -> list[str]:
        return sorted(self._tools)

    async def call(
        self, tool: McpTool, args: dict[str, Any], ctx: ToolContext | None = None
    ) -> ToolResult:
        """Call `tool` on its server: (re)start it if needed; a timeout, a dead server or a
        protocol error becomes an error result the model reads. An HTTP server whose
        connection broke (it restarted, it forgot our session) is reconnected and asked
        once more: the request never reached it."""
        connection = self.connections[tool.server]
        attempts = 2 if connection.spec.url else 1
        for attempt in range(attempts):
            try:
                client = await connection.ensure()
            except McpConnectError as exc:
                return ToolResult(f"{exc}. The tool cannot run now; go on without it.", True)
            outcome = await self._call_once(connection, client, tool, args, ctx)
            if isinstance(outcome, ToolResult):
                return outcome
            await connection.reset(f"the connection broke ({outcome}); it reconnects on next use")
            if attempt + 1 == attempts:
                return ToolResult(
                    f"MCP server {tool.server!r} went away during the call ({outcome}); it "
                    "will be started again on the next call.",
                    is_error=True,
                )
        raise AssertionError("unreachable")

    async def _call_once(
        self,
        connection: ServerConnection,
        client: Any,
        tool: McpTool,
        args: dict[str, Any],
        ctx: ToolContext | None,
    ) -> ToolResult | str:
        """The result, or a string saying how the connection broke. The server's progress
        notifications become the tool's progress events."""

        async def progress(done: float, total: float | None, message: str | None) -> None:
            if ctx is not None:
                await ctx.report(done / total if total else None, message or "")

        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED

        timeout = connection.spec.timeout
        try:
            async with asyncio.timeout(timeout):
                result = await client.call_tool(tool.remote_name, args, progress_callback=progress)
        except TimeoutError:
            return ToolResult(
                f"{tool.name} did not answer within {timeout:g} s (the server's `timeout`) and "
                "was abandoned. Try a smaller request, or go on without it.",
                is_error=True,
            )
        except MCPError as exc:
            if exc.error.code == CONNECTION_CLOSED or connection.state != "ready":
                return str(exc) or "connection closed"
            return ToolResult(f"{tool.name} failed: {exc}", is_error=True)
        except Exception as exc:  # a malformed result, a broken stream
            return ToolResult(
                f"{tool.name} failed: {type(exc).__name__}: {exc}. The server may be broken; "
                "go on without it.",
                is_error=True,
            )
        text = result_text(result, self.settings.max_result_chars)
        return ToolResult(text, is_error=bool(result.is_error))

    # -- reporting and stopping ----------------------------------------------------------

    def statuses(self) -> list[ServerStatus]:
        rows = []
        for name, spec in sorted(self.specs.items()):
            connection = self.connections.get(name)
            if connection is None:
                state, why = self.blocked.get(name, ("idle", ""))
                rows.append(ServerStatus(name, state, 0, 0, why, spec.origin, spec.details()))
                continue
            count = sum(1 for tool in self._tools.values() if tool.server == name)
            detail = connection.error or spec.describe()
            rows.append(
                ServerStatus(
                    name,
                    connection.state,
                    count,
                    self.full_tokens(name),
                    detail,
                    spec.origin,
                    spec.details(),
                )
            )
        return rows

    async def aclose(self) -> None:
        """Stop every server this session started."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(BaseException):
                await task
        await asyncio.gather(
            *(connection.aclose() for connection in self.connections.values()),
            return_exceptions=True,
        )


def _quiet_sdk_logs() -> None:
    """The SDK logs a traceback for each unparsable line a server prints; Loom reports a
    failing server in one line of its own instead."""
    for name in ("mcp", "mcp.client.stdio"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
