"""An ACP client (the SDK's own client side) driving `loom acp` as a subprocess against
the fake LLM server."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

from acp import Client, spawn_agent_process
from tests.fakes.llm_server import FakeLlmServer
from tests.support.loom_cli import provider_env


@dataclass
class RecordingClient:
    """Records every session/update and answers permission requests as told."""

    answers: list[str] = field(default_factory=list)  # option ids, in order; default allow_once
    updates: list[tuple[str, Any]] = field(default_factory=list)
    permission_requests: list[Any] = field(default_factory=list)

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **_: Any
    ) -> RequestPermissionResponse:
        self.permission_requests.append((session_id, tool_call, options))
        answer = self.answers.pop(0) if self.answers else "allow_once"
        if answer == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=answer)
        )

    def on_connect(self, conn: Any) -> None:
        pass

    def kinds(self, session_id: str | None = None) -> list[str]:
        """The updates' kinds in order, leaving out the command list (sent on its own
        timer once the session exists)."""
        return [
            u.session_update
            for sid, u in self.updates
            if (session_id is None or sid == session_id)
            and u.session_update != "available_commands_update"
        ]

    def text(self, session_id: str | None = None) -> str:
        return "".join(
            u.content.text
            for sid, u in self.updates
            if u.session_update == "agent_message_chunk" and (session_id in (None, sid))
        )


@asynccontextmanager
async def acp_agent(
    fake: FakeLlmServer, root: Path, client: RecordingClient, *args: str
) -> AsyncIterator[tuple[Any, Any]]:
    env = {**os.environ, **provider_env(fake)}
    async with spawn_agent_process(
        lambda _agent: cast("Client", client),  # answers what Loom asks of a client here
        sys.executable,
        "-m",
        "loom",
        "acp",
        *args,
        env=env,
        cwd=root,
    ) as (conn, process):
        yield conn, process
