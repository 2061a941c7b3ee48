"""A session's external MCP servers: started in the background when the session starts,
awaited by its first turn, stopped with it. Their problems are one line each, handed to
the face's `SessionSpec.on_mcp_notice`, or else published as `error` events (origin
Tool) on the session's topic; lines from before the first turn are published when it
starts, so a face that subscribes after start_session still shows them."""

from __future__ import annotations

from typing import Any

from loom.tools.base import ToolRegistry


def start_session_mcp(workspace: Any, session: Any, tools: ToolRegistry, spec: Any) -> Any:
    """Start the servers (none configured: nothing imported, None returned); their tools
    join `tools` as each is ready. Returns the hub; its `aclose` must run at stop.
    (`workspace`, `session`, `spec`: a Workspace, Session, SessionSpec, typed Any since
    this module sits below workspace.py in the import graph.)"""
    config = workspace.config
    mcp_json = workspace.project_root / ".mcp.json"
    if not (config.mcp.servers or spec.mcp_servers or mcp_json.is_file()):
        return None
    from loom.mcp_client import start_mcp

    relay = _NoticeRelay(session, spec)
    hub = start_mcp(
        config,
        tools,
        paths=workspace.paths,
        session_servers=spec.mcp_servers,
        on_notice=relay.notice,
        face_asks_approval=spec.asks_mcp_approval,
    )
    if hub is None:
        return None
    timeout = config.mcp.startup_timeout

    async def first_turn_waits() -> None:
        await hub.wait_ready(timeout)
        relay.flush()

    session.before_turn.append(first_turn_waits)
    return hub


class _NoticeRelay:
    def __init__(self, session: Any, spec: Any) -> None:
        self.session = session
        self.face = spec.on_mcp_notice
        self.pending: list[str] | None = []  # None once the first turn started

    def notice(self, line: str) -> None:
        if self.face is not None:
            self.face(line)
        elif self.pending is not None:
            self.pending.append(line)
        else:
            self._publish(line)

    def flush(self) -> None:
        pending, self.pending = self.pending or [], None
        for line in pending:
            self._publish(line)

    def _publish(self, line: str) -> None:
        from loom.core.events import SessionError

        self.session.publish(SessionError(session_id=self.session.id, origin="Tool", message=line))
