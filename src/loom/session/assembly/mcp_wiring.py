"""A session's external MCP servers: started in the background just before the session is
built, awaited by its first turn, stopped with it. Their tools join the registry the
session is built with, as each server is ready. Their problems are one line each, handed
to the face's `SessionSpec.on_mcp_notice`, or else published as `error` events (origin
Tool) on the session's topic; lines from before the first turn are published when it
starts, so a face that subscribes after start_session still shows them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from loom.core.events import SessionError, SessionEvent
from loom.tools.base import ToolRegistry

if TYPE_CHECKING:
    from loom.config import LoomConfig
    from loom.mcp_client import McpHub
    from loom.paths import LoomPaths


@dataclass(frozen=True)
class SessionMcp:
    """A session's running servers (`hub`) and what its first turn awaits."""

    hub: McpHub
    before_turn: Callable[[], Awaitable[None]]


def start_session_mcp(
    config: LoomConfig,
    paths: LoomPaths,
    tools: ToolRegistry,
    *,
    session_id: str,
    publish: Callable[[SessionEvent], None],
    servers: Sequence[Any] = (),
    on_notice: Callable[[str], None] | None = None,
    face_asks_approval: bool = False,
) -> SessionMcp | None:
    """Start the servers (none configured: nothing imported, None returned); their tools
    join `tools` as each is ready. The hub's `aclose` must run when the session stops.
    `servers`, `on_notice`, `face_asks_approval`: the SessionSpec's `mcp_servers`,
    `on_mcp_notice`, `asks_mcp_approval`; `publish`: onto the session's topic."""
    mcp_json = config.project_root / ".mcp.json"
    if not (config.mcp.servers or servers or mcp_json.is_file()):
        return None
    from loom.mcp_client import start_mcp

    relay = _NoticeRelay(session_id, publish, on_notice)
    hub = start_mcp(
        config,
        tools,
        paths=paths,
        session_servers=servers,
        on_notice=relay.notice,
        face_asks_approval=face_asks_approval,
    )
    if hub is None:
        return None
    timeout = config.mcp.startup_timeout

    async def first_turn_waits() -> None:
        await hub.wait_ready(timeout)
        relay.flush()

    return SessionMcp(hub, first_turn_waits)


class _NoticeRelay:
    def __init__(
        self,
        session_id: str,
        publish: Callable[[SessionEvent], None],
        face: Callable[[str], None] | None,
    ) -> None:
        self.session_id = session_id
        self.publish = publish
        self.face = face
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
        self.publish(SessionError(session_id=self.session_id, origin="Tool", message=line))
