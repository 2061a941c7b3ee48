"""SessionManager: starts, finds, lists and stops sessions (seed 001's Manager).

Sessions run concurrently as asyncio tasks in one process. Isolation is by design: a
tool's exception or hang becomes an error result (with a timeout), a model error ends
only that session's turn, and a crash in a session's runtime restarts that session from
its last saved thread (`Session.restarts` counts them). Thread saves from every session
go through one writer thread, so file and index writes never race.

Everything that touches the outside world is injectable, so tests use the scripted
provider and the faces plug in the real registry:

    manager = SessionManager(store=store, provider_factory=lambda model: provider)
    session = await manager.start_session(project_path="/proj", tools=[...])
    answer = await session.send_message("fix the failing test")
"""

from __future__ import annotations

import contextlib
import inspect
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom.config import DEFAULT_MODEL, LoomConfig, default_model
from loom.core.thread import Thread
from loom.llm.base import Provider
from loom.session.runtime.bus import EventBus
from loom.session.runtime.options import SessionOptions
from loom.session.runtime.session import Session
from loom.tools.base import Tool, ToolRegistry

if TYPE_CHECKING:
    from loom.store.base import ThreadStore

__all__ = ["DEFAULT_MODEL", "SessionManager", "SessionNotFound"]  # DEFAULT_MODEL: loom.config


class SessionNotFound(LookupError):
    def __init__(self, session_id: str) -> None:
        super().__init__(f"no active session {session_id!r}; list them with list_active()")
        self.session_id = session_id


class SessionManager:
    def __init__(
        self,
        *,
        store: ThreadStore | None = None,
        provider_factory: Callable[[str], Provider] | None = None,
        policy_factory: Callable[..., Any] | None = None,
        tools_factory: Callable[[Path], ToolRegistry] | None = None,
        bus: EventBus | None = None,
        config: LoomConfig | None = None,
        options: SessionOptions | None = None,
    ) -> None:
        if store is None:
            from loom.store.local import LocalThreadStore

            store = LocalThreadStore()
        self.store: ThreadStore = store
        self.config = config or LoomConfig()
        self.provider_factory = provider_factory or _configured_provider(self.config)
        self.policy_factory = policy_factory or self._default_policy
        self.tools_factory = tools_factory
        self.bus = bus or EventBus()
        self.options = options or SessionOptions.from_config(self.config)
        # With a configuration (a real face), the repo-intel map is on unless
        # repo.map_tokens is 0; tests and benches pass options and get no map.
        self.repo_map_factory: Callable[[Path], Any] | None = None
        if options is None and config is not None and config.repo.map_tokens > 0:
            from loom.session.runtime.repo_map import repointel_hook

            self.repo_map_factory = repointel_hook
        # Checkpoints before file-changing tools ([checkpoints]), for real faces too.
        self.checkpoint_factory: Callable[[Path], Any] | None = None
        if options is None and config is not None:
            from loom.session.runtime.checkpointing import checkpointer_for

            self.checkpoint_factory = lambda root: checkpointer_for(root, config)
        self._sessions: dict[str, Session] = {}
        self._locks: dict[str, Any] = {}
        self._save_executor = ThreadPoolExecutor(1, thread_name_prefix="loom-save")

    async def start_session(
        self,
        session_id: str | None = None,
        model: str | None = None,
        project_path: str | os.PathLike[str] | None = None,
        title: str | None = None,
        tools: Iterable[Tool] | ToolRegistry | None = None,
        auto_approve: bool = False,
        thread: Thread | str | None = None,
        *,
        private: bool = False,
        mode: str = "normal",
        project_rules: str | None = None,
        instructions: Any = None,
        cwd: Path | None = None,
        sandbox_summary: tuple[str, str] | None = None,
        max_turns: int | None = None,
        options: SessionOptions | None = None,
        provider_factory: Callable[[str], Provider] | None = None,
        permissions: Any = None,
    ) -> Session:
        """Start a session on a new thread, or resume `thread` (a Thread or its id).
        `provider_factory` and `permissions` replace the manager's for this session.

        Raises ValueError for a bad model name or a session id already running,
        LookupError when the thread to resume does not exist, and the store's
        ThreadLocked when another Loom process is writing that thread."""
        model = default_model(self.config, model)
        thread = self.thread_for(thread, project_path, model, private)
        if title:
            thread.metadata.title = title
        root = Path(project_path or thread.workspace_root or os.getcwd()).resolve()
        session_id = session_id or thread.id
        if session_id in self._sessions:
            raise ValueError(f"session {session_id!r} is already running; stop it first")
        options = replace(options or self.options)
        if options.repo_map is None and self.repo_map_factory is not None:
            options.repo_map = self.repo_map_factory(root)
        if options.checkpointer is None and self.checkpoint_factory is not None:
            options.checkpointer = self.checkpoint_factory(root)
        if project_rules is not None:  # instructions as plain text (tests, embedders)
            options.rules = project_rules
        if instructions is not None:  # loom.prompts.ProjectInstructions, read at start
            options.instructions = instructions
        if cwd is not None:
            options.cwd = cwd
        if sandbox_summary is not None:
            options.sandbox_summary = sandbox_summary
        if max_turns is not None:  # model requests per user message (`--max-turns`):
            # the Nth response's tool calls are answered "not run" instead of asking again
            options.max_tool_rounds = max(max_turns - 1, 0)
        policy = permissions
        if policy is None:
            policy = _call(self.policy_factory, project_root=root, auto_approve=auto_approve)
        lock = self._lock(thread.id)
        try:
            session = Session(
                session_id=session_id,
                thread=thread,
                store=self.store,
                provider_factory=provider_factory or self.provider_factory,
                tools=self._registry(tools, root),
                permissions=policy,
                bus=self.bus,
                model=model,
                project_root=root,
                options=options,
                save_executor=self._save_executor,
            )
            session.set_mode(mode)
            await session.start()
        except BaseException:
            if lock is not None:
                lock.release()
            raise
        if lock is not None:
            self._locks[session_id] = lock
        self._sessions[session_id] = session
        return session

    async def stop_session(self, session_id: str) -> None:
        session = self._sessions.pop(session_id, None)
        if session is None:
            raise SessionNotFound(session_id)
        try:
            await session.stop()
        finally:
            lock = self._locks.pop(session_id, None)
            if lock is not None:
                lock.release()
        if session.never_answered:  # to the trash (restorable): no empty failed threads
            with contextlib.suppress(Exception):  # never saved, or already gone: fine
                self.store.delete(session.thread.id)

    def find_session(self, session_id: str) -> Session | None:
        return self._sessions.get(session_id)

    def list_active(self) -> list[dict[str, Any]]:
        return [
            {
                "id": s.id,
                "status": s.get_status(),
                "thread_id": s.thread.id,
                "model": s.model,
                "mode": s.get_mode(),
            }
            for s in self._sessions.values()
        ]

    async def shutdown(self) -> None:
        """Stop every session (answers open tool calls, saves, snapshots git)."""
        for session_id in list(self._sessions):
            await self.stop_session(session_id)
        self._save_executor.shutdown(wait=True)
        # usable again afterwards (the pool starts its thread only when needed)
        self._save_executor = ThreadPoolExecutor(1, thread_name_prefix="loom-save")

    # -- helpers -------------------------------------------------------------------

    def _default_policy(self, project_root: Path, auto_approve: bool) -> Any:
        from loom.paths import LoomPaths
        from loom.session.assembly.policy import permission_policy

        database = LoomPaths.from_env().database
        return permission_policy(self.config, database, project_root, auto_approve=auto_approve)

    def thread_for(
        self, thread: Thread | str | None, project_path: Any, model: str, private: bool
    ) -> Thread:
        """`thread` itself, the saved thread of that id, or a new one (not saved yet)."""
        if isinstance(thread, Thread):
            return thread
        if isinstance(thread, str):
            loaded = self.store.load(self.store.resolve(thread))
            if loaded is None:
                raise LookupError(f"no thread {thread!r}; run `loom list` to see thread ids")
            return loaded
        from loom.llm.registry import parse_model_name

        provider, model_id = parse_model_name(model)
        root = str(Path(project_path or os.getcwd()).resolve())
        return Thread.new(
            workspace_root=root, cwd=root, provider=provider, model=model_id, is_private=private
        )

    def _lock(self, thread_id: str) -> Any:
        return self.store.acquire_writer(thread_id)

    def _registry(self, tools: Iterable[Tool] | ToolRegistry | None, root: Path) -> ToolRegistry:
        if isinstance(tools, ToolRegistry):
            return tools
        if tools is not None:
            return ToolRegistry(tools)
        if self.tools_factory is not None:
            return self.tools_factory(root)
        return ToolRegistry()


def _configured_provider(config: LoomConfig) -> Callable[[str], Provider]:
    from loom.session.assembly.providers import provider_factory

    return provider_factory(config)


def _call(factory: Callable[..., Any], **available: Any) -> Any:
    """Call `factory` with the keyword arguments it declares (it may take none)."""
    parameters = inspect.signature(factory).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return factory(**available)
    return factory(**{k: v for k, v in available.items() if k in parameters})
