"""The sessions a Workspace runs (seed 001's Manager), with no defaults of its own.

Sessions run concurrently as asyncio tasks in one process. Isolation is by design: a
tool's exception or hang becomes an error result (with a timeout), a model error ends
only that session's turn, and a crash in a session's runtime restarts that session from
its last saved thread (`Session.restarts` counts them). Thread saves from every session
go through one writer thread (`save_executor`), so file and index writes never race.

The registry only keeps what runs: `Workspace.start_session` is the one place a
session is put together, and registers it here with its thread's writer lock and the
cleanups that run when it stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from loom.core.errors import NotFound
from loom.session.runtime.save_writer import SaveWriter
from loom.session.workspace.spec import SessionSpec

if TYPE_CHECKING:
    from loom.mcp_client import McpHub
    from loom.sandbox import Sandbox
    from loom.session.runtime.session import Session

log = logging.getLogger(__name__)


@dataclass
class Running:
    """One running session and what goes with it until it stops."""

    session: Session
    spec: SessionSpec = field(default_factory=SessionSpec)  # what it was started with
    lock: Any = None  # the store's writer lock on its thread
    cleanups: list[Callable[[], Any]] = field(default_factory=list)
    mcp: McpHub | None = None  # when the session has MCP servers
    parent_id: str | None = None  # a sub-agent's: the session that started it
    sandbox: Sandbox | None = None  # its commands run in it (a sub-agent may share it)


class SessionRegistry:
    def __init__(self) -> None:
        self._running: dict[str, Running] = {}
        self.save_executor = SaveWriter()

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._running

    def __iter__(self) -> Iterator[Running]:
        return iter(list(self._running.values()))

    def ids(self) -> list[str]:
        return list(self._running)

    def get(self, session_id: str) -> Running | None:
        return self._running.get(session_id)

    def add(self, running: Running) -> None:
        session_id = running.session.id
        if session_id in self._running:
            raise ValueError(f"session {session_id!r} is already running; stop it first")
        self._running[session_id] = running

    async def stop(self, session_id: str) -> None:
        """Stop a session: interrupt its turn, answer open calls, snapshot git, save;
        release its thread, then run its cleanups. A session nobody spoke to leaves no
        thread behind (it goes to the trash, restorable)."""
        running = self._running.pop(session_id, None)
        if running is None:
            raise NotFound(f"no active session {session_id!r}", "list them with list_active()")
        session = running.session
        try:
            try:
                await session.stop()
            finally:
                if running.lock is not None:
                    running.lock.release()
            if session.never_answered:  # no empty failed threads
                with contextlib.suppress(Exception):  # never saved, or already gone: fine
                    session.store.delete(session.thread.id)
        finally:
            await run_cleanups(running.cleanups, session_id)

    def close(self) -> None:
        """Wait for the saves in flight; usable again afterwards (the writer starts its
        thread only when needed)."""
        self.save_executor.shutdown(wait=True)
        self.save_executor = SaveWriter()


async def run_cleanups(cleanups: list[Callable[[], Any]], session_id: str) -> None:
    """Last registered first; one failed cleanup never keeps the others from running."""
    for cleanup in reversed(cleanups):
        try:
            outcome = cleanup()
            if asyncio.iscoroutine(outcome):
                await outcome
        except Exception:
            log.exception("cleanup of session %s failed", session_id)
