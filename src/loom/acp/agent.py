"""`loom acp`: Loom as an Agent Client Protocol agent (JSON-RPC over stdio, protocol v1).

An ACP session is a Loom session, and its id is the Loom thread id, so `session/load`
resumes any thread (made in the terminal, the web page or another editor) and a thread
made here stays a normal Loom thread. Everything goes through the Workspace: one per
project folder (`cwd`), many sessions each.
"""

from __future__ import annotations

import asyncio
import logging
from functools import partial
from pathlib import Path
from typing import Any

from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from acp import PROTOCOL_VERSION, RequestError
from loom import __version__
from loom.acp import commands, updates
from loom.acp.files import editor_files_for
from loom.acp.live import LiveSession, config_options, mode_state
from loom.acp.mcp_servers import loom_mcp_servers

log = logging.getLogger(__name__)
LIST_PAGE = 50


class LoomAgent:
    """The ACP `Agent` the SDK's connection calls (one per `loom acp` process)."""

    def __init__(self, overrides: dict[str, Any] | None = None) -> None:
        self._overrides = overrides or {}
        self._client: Any = None
        self._client_capabilities: Any = None
        self._workspaces: dict[Path, Any] = {}
        self._live: dict[str, LiveSession] = {}

    def on_connect(self, conn: Any) -> None:
        self._client = conn

    # -- lifecycle -------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **_: Any,
    ) -> InitializeResponse:
        self._client_capabilities = client_capabilities
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True, image=False),
                mcp_capabilities=McpCapabilities(http=True),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            agent_info=Implementation(name="loom", title="Loom", version=__version__),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **_: Any) -> None:
        return None  # provider keys come from Loom's configuration, not the editor

    async def shutdown(self) -> None:
        for live in list(self._live.values()):
            await live.close()
        self._live.clear()
        for workspace in self._workspaces.values():
            await workspace.shutdown()
        self._workspaces.clear()

    # -- sessions ----------------------------------------------------------------------

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> NewSessionResponse:
        workspace = self._workspace(cwd, project=True)
        live = await self._start(workspace, cwd, mcp_servers, thread=None)
        return NewSessionResponse(
            session_id=live.id, modes=mode_state(live.session), config_options=config_options(
                workspace, live.session
            ),
        )  # fmt: skip

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> LoadSessionResponse:
        from loom.session import LoomError, thread_project

        try:  # the thread's own project governs it, whatever folder the editor is in
            home = await asyncio.to_thread(thread_project, session_id)
        except LoomError as exc:  # that folder is gone
            raise RequestError.invalid_params({"sessionId": str(exc)}) from exc
        workspace = self._workspace(str(home or cwd), project=True)
        live = self._live.get(session_id)
        if live is None:
            live = await self._start(workspace, cwd, mcp_servers, thread=session_id)
        # the whole conversation, in order, before the answer (the spec's contract)
        for update in updates.replay(live.session.get_history(), live.root, live.session.tools):
            await self._client.session_update(session_id=live.id, update=update)
        await live.send_usage()
        return LoadSessionResponse(
            modes=mode_state(live.session),
            config_options=config_options(workspace, live.session),
        )

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **_: Any
    ) -> ListSessionsResponse:
        workspace = self._workspace(cwd) if cwd else self._any_workspace()
        offset = int(cursor) if cursor and cursor.isdigit() else 0
        rows = await asyncio.to_thread(workspace.threads.list, limit=LIST_PAGE + 1, offset=offset)
        root = str(Path(cwd).resolve()) if cwd else None
        sessions = [
            SessionInfo(
                session_id=row.id,
                cwd=row.workspace_root or str(workspace.project_root),
                title=row.title,
                updated_at=row.last_activity_at,
            )
            for row in rows[:LIST_PAGE]
            if root is None or row.workspace_root in (None, root)
        ]
        more = str(offset + LIST_PAGE) if len(rows) > LIST_PAGE else None
        return ListSessionsResponse(sessions=sessions, next_cursor=more)

    async def set_session_mode(
        self, session_id: str, mode_id: str, **_: Any
    ) -> SetSessionModeResponse:
        live = self._session(session_id)
        if mode_id not in ("normal", "architect"):
            raise RequestError.invalid_params({"modeId": f"unknown mode {mode_id!r}; "
                                               "use normal or architect"})  # fmt: skip
        from loom.session import LoomError

        try:
            live.session.set_mode(mode_id)
        except LoomError as exc:  # architect mode with no key for its models
            raise RequestError.invalid_params({"modeId": str(exc)}) from exc
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: Any, **_: Any
    ) -> SetSessionConfigOptionResponse:
        live = self._session(session_id)
        workspace = live.workspace
        if config_id == "model":
            from loom.session import LoomError

            try:
                workspace.check_model(str(value))
            except LoomError as exc:
                raise RequestError.invalid_params({"value": str(exc)}) from exc
            live.session.update_model(str(value))
        elif config_id == "mode":
            await self.set_session_mode(session_id, str(value))
        elif config_id == "permission_mode":
            try:
                live.session.set_permission_mode(str(value))
            except ValueError as exc:
                raise RequestError.invalid_params({"value": str(exc)}) from exc
        else:
            raise RequestError.invalid_params(
                {"configId": f"unknown option {config_id!r}; Loom has model, mode and "
                 "permission_mode"}
            )  # fmt: skip
        return SetSessionConfigOptionResponse(
            config_options=config_options(workspace, live.session)
        )

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> PromptResponse:
        live = self._session(session_id)
        text = updates.prompt_text(prompt)
        if not text.strip():
            raise RequestError.invalid_params({"prompt": "the prompt has no text"})
        command = commands.parse(text)
        if command is not None:
            said = await commands.run(live, *command)
            await self._client.session_update(session_id=live.id, update=updates.agent_text(said))
            return PromptResponse(stop_reason="end_turn")
        stop_reason = await live.run_turn(text)
        return PromptResponse(stop_reason=stop_reason)

    async def cancel(self, session_id: str, **_: Any) -> None:
        live = self._live.get(session_id)
        if live is not None:
            live.cancel()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    # -- helpers ---------------------------------------------------------------------------

    def _workspace(self, cwd: str | None, *, project: bool = False) -> Any:
        """The Workspace of `cwd`; with `project`, a home folder, `/` or a folder holding
        home is refused (sessions there would make every file of the person's the
        agent's)."""
        from loom.session import LoomError, Workspace, not_a_project

        if not cwd:
            raise RequestError.invalid_params({"cwd": "cwd is required"})
        path = Path(cwd)
        if not path.is_absolute():
            raise RequestError.invalid_params({"cwd": f"{cwd!r} must be an absolute path"})
        if not path.is_dir():
            raise RequestError.invalid_params({"cwd": f"{cwd} does not exist or is not a folder"})
        path = path.resolve()
        workspace = self._workspaces.get(path)
        if workspace is None:
            try:
                workspace = Workspace.open(cwd=path, overrides=self._overrides)
            except LoomError as exc:
                raise RequestError.invalid_params({"cwd": str(exc)}) from exc
            for warning in workspace.warnings:
                log.warning("%s", warning)
            self._workspaces[path] = workspace
        problem = not_a_project(workspace.project_root) if project else None
        if problem is not None:
            raise RequestError.invalid_params(
                {"cwd": f"{problem}; open a project folder (a repository) instead"}
            )
        return workspace

    def _any_workspace(self) -> Any:
        if self._workspaces:
            return next(iter(self._workspaces.values()))
        return self._workspace(str(Path.cwd()))

    def _session(self, session_id: str) -> LiveSession:
        live = self._live.get(session_id)
        if live is None:
            raise RequestError.invalid_params(
                {"sessionId": f"no session {session_id!r} in this process; create one with "
                              "session/new or resume a thread with session/load"}
            )  # fmt: skip
        return live

    async def _start(
        self, workspace: Any, cwd: str, mcp_servers: list[Any] | None, thread: str | None
    ) -> LiveSession:
        from loom.session import LoomError, SessionSpec

        spec = SessionSpec(
            thread=thread,
            cwd=Path(cwd),
            mcp_servers=loom_mcp_servers(mcp_servers or []),
            on_mcp_notice=lambda line: log.warning("%s", line),
            asks_mcp_approval=True,  # the editor is asked before the first turn
            extra_tools=(),
            # its file tools read and write the editor's buffers when the client offers them
            editor_files=partial(
                editor_files_for, self._client, capabilities=self._client_capabilities
            ),
        )
        try:
            session = await workspace.start_session(spec)
        except LoomError as exc:
            raise RequestError.invalid_params({"reason": str(exc)}) from exc
        live = LiveSession(workspace, session, self._client, self._client_capabilities)
        self._live[live.id] = live
        # after the answer that names the session, so the editor knows whose list it is
        asyncio.get_running_loop().call_later(0.1, live.send_later, commands.available_commands())
        return live
