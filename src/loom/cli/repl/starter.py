"""Opening the REPL's session in the background, so the prompt appears first.

Reading the configuration, importing the provider's SDK (0.3-3 s on a busy machine) and
putting the session together run while the person already types; a message sent
before they are done waits for them. Imports run on a worker thread so the prompt stays
responsive; the session itself is assembled on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom.core.errors import LoomError

if TYPE_CHECKING:
    from loom.config import LoomConfig
    from loom.session import Session, Workspace


class StartFailed(LoomError):
    """The session could not start; the message says what to fix, `code` is the exit
    code (2: a usage error, such as a bad --worktree name)."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class StartRequest:
    model: str | None = None
    private: bool = False
    thread_id: str | None = None
    continue_latest: bool = False  # `loom -c`: the newest thread of this project
    auto_approve: bool = False  # --yes: tools run and architect plans go ahead unasked
    permission_mode: str = "default"  # --permission-mode (--yes: bypassPermissions)
    no_sandbox: bool = False  # --no-sandbox: shell and git commands run unconfined
    cwd: Path | None = None
    worktree: str | None = None  # --worktree NAME: work in the project's worktree NAME
    effort: str | None = None  # --effort: how hard a reasoning model thinks


class SessionStarter:
    def __init__(self, request: StartRequest) -> None:
        self.request = request
        self.cwd = (request.cwd or Path.cwd()).resolve()
        self.workspace: Workspace | None = None
        self.session: Session | None = None
        self._task: asyncio.Task[Session] | None = None
        self._on_ready: list[Callable[[], Any]] = []
        self._on_failed: list[Callable[[], Any]] = []
        self._plan_approval: Callable[[Any], Awaitable[tuple[str, str]]] | None = None

    def asks_plans(self, approve: Callable[[Any], Awaitable[tuple[str, str]]]) -> None:
        """Architect plans are put to the person with `approve` (not with --yes, which
        carries them out unasked); given to the session as it is built."""
        self._plan_approval = approve

    @property
    def open_session(self) -> Session:
        """The session, once open (`ready`); AttributeError before, as None's would be."""
        if self.session is None:
            raise AttributeError("the session is not open yet")
        return self.session

    @property
    def open_workspace(self) -> Workspace:
        if self.workspace is None:
            raise AttributeError("the workspace is not open yet")
        return self.workspace

    @property
    def config(self) -> LoomConfig:
        return self.open_workspace.config

    @property
    def warnings(self) -> list[str]:
        return self.workspace.warnings if self.workspace is not None else []

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.ensure_future(self._open())
            self._task.add_done_callback(self._finished)

    def on_ready(self, callback: Callable[[], Any]) -> None:
        """`callback()` once the session is open (not called when it fails)."""
        self._on_ready.append(callback)

    def on_failed(self, callback: Callable[[], Any]) -> None:
        """`callback()` if the session cannot start (`wait()` then says why)."""
        self._on_failed.append(callback)

    def _finished(self, task: asyncio.Task[Session]) -> None:
        if task.cancelled() or task.exception() is not None:
            for callback in self._on_failed:
                callback()

    @property
    def ready(self) -> bool:
        return self.session is not None

    @property
    def done(self) -> bool:
        return self._task is not None and self._task.done()

    async def wait(self) -> Session:
        """The open session; raises StartFailed."""
        self.start()
        assert self._task is not None
        return await asyncio.shield(self._task)

    async def cancel(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task

    async def close(self) -> None:
        """Stop the session (saves the thread) and everything the workspace started."""
        await self.cancel()
        if self.workspace is not None:
            await self.workspace.shutdown()

    async def _open(self) -> Session:
        from loom.session import BadInput, LoomError, SessionSpec

        try:
            self.workspace = workspace = await asyncio.to_thread(self._prepare)
            thread_id = self.request.thread_id
            if self.request.continue_latest and thread_id is None:
                thread_id = await asyncio.to_thread(self._latest_thread)
            session = await workspace.start_session(
                SessionSpec(
                    model=self.request.model,
                    private=self.request.private,
                    auto_approve=self.request.auto_approve,
                    permission_mode=self.request.permission_mode,
                    thread=thread_id,
                    effort=self.request.effort,
                    cwd=self.cwd,
                    # on a terminal the REPL asked before the session started
                    asks_mcp_approval=sys.stdin.isatty(),
                    plan_approval=None if self.request.auto_approve else self._plan_approval,
                )
            )
        except LoomError as exc:
            raise StartFailed(str(exc), 2 if isinstance(exc, BadInput) else 1) from exc
        self.session = session
        for callback in self._on_ready:
            callback()
        return session

    def _prepare(self) -> Workspace:
        """On a worker thread: the configuration, the heavy imports, the provider (whose
        SDK import is the slowest step), and the workspace around them."""
        from loom.session import Workspace

        worktree = None
        if self.request.worktree:  # made (or reused) first: the session works in it
            from loom.session import WorktreesApi

            worktree, _made = WorktreesApi.for_folder(self.cwd).ensure(self.request.worktree)
            self.cwd = worktree.path
        sandbox_mode = "off" if self.request.no_sandbox else None
        workspace = Workspace.open(
            self.cwd,
            {"model.default": self.request.model, "sandbox.mode": sandbox_mode},
            thread=self.request.thread_id,  # a resumed thread: its own project's settings
        )
        workspace.worktree = worktree
        import rich.console  # noqa: F401  (the renderer's, imported here off the loop)

        workspace.prewarm()  # a bad name is reported by start_session
        return workspace

    def _latest_thread(self) -> str:
        from loom.session import newest_thread_in

        root = self.open_workspace.project_root
        found = newest_thread_in(root, self.open_workspace.paths)
        if found is None:
            raise StartFailed(
                f"no thread of this project ({root}) to continue; start one with `loom`"
            )
        return found
