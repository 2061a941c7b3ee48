"""A stand-in for `loom.session.Workspace` (issue 8) with the contract's names, used only
until the real one lands (see `_compat`). It composes the existing pieces the way
`loom.session.factory.open_session` does, but keeps one manager and one store for many
sessions. Delete this module when `from loom.session import Workspace` works.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loom.config import LoomConfig, load_config, load_project_rules
from loom.paths import LoomPaths


class LoomError(Exception):
    """A problem a person must fix; the message says what and what to do."""


@dataclass
class SessionSpec:
    model: str | None = None
    thread: str | None = None
    private: bool = False
    mode: str = "normal"
    max_turns: int | None = None
    auto_approve: bool = False
    headless: bool = False
    on_refusal: Callable[[str, str | None, str], None] | None = None
    cwd: Path | None = None
    extra_tools: tuple[Any, ...] = ()


@dataclass
class ActiveSession:
    id: str
    thread_id: str
    title: str
    status: str
    model: str
    mode: str


class _Threads:
    def __init__(self, store: Any) -> None:
        self.store = store

    def list(self, limit: int = 50, offset: int = 0) -> list[Any]:
        return self.store.list(limit + offset)[offset:]

    def search(self, query: str, limit: int = 20) -> list[Any]:
        return self.store.search(query, limit)

    def resolve(self, ref: str) -> str:
        return self._guard(self.store.resolve, ref)

    def load(self, ref: str) -> Any:
        thread = self.store.load(self.resolve(ref))
        if thread is None:
            raise LoomError(f"no thread {ref!r}; it was deleted")
        return thread

    def delete(self, ref: str) -> None:
        self._guard(self.store.delete, self.resolve(ref))

    def restore(self, ref: str) -> str:
        return self._guard(self.store.restore, ref)

    def rename(self, ref: str, title: str) -> None:
        thread_id = self.resolve(ref)

        def write() -> None:
            with self.store.open_for_writing(thread_id):
                thread = self.store.load(thread_id)
                thread.metadata.title = title
                self.store.save(thread)

        self._guard(write)

    @staticmethod
    def _guard(fn: Callable[..., Any], *args: Any) -> Any:
        from loom.store.atomic import StorageError
        from loom.store.base import (
            AmbiguousThreadId,
            ThreadLocked,
            ThreadNotFound,
            ThreadUnreadable,
        )

        try:
            return fn(*args)
        except (ThreadNotFound, AmbiguousThreadId, ThreadUnreadable, ThreadLocked) as exc:
            raise LoomError(str(exc)) from exc
        except StorageError as exc:
            raise LoomError(exc.strerror or str(exc)) from exc


class _Repo:
    def __init__(self, config: LoomConfig) -> None:
        self.config = config

    def files(self) -> list[str]:
        """Project files under the repo index's ignore rules, sorted."""
        from loom.repointel.scan import DEFAULT_IGNORES, scan_project

        scan = scan_project(
            str(self.config.project_root),
            ignore=[*DEFAULT_IGNORES, *self.config.repo.ignore],
            max_file_bytes=self.config.repo.max_file_bytes,
        )
        return sorted([*scan.files, *scan.too_large])


class Workspace:
    def __init__(
        self,
        config: LoomConfig,
        paths: LoomPaths | None = None,
        provider_factory: Callable[[str], Any] | None = None,
    ) -> None:
        from loom.llm.retry import RetryPolicy
        from loom.session import SessionManager
        from loom.session.factory import provider_factory as config_providers
        from loom.store.factory import open_thread_store

        self.config = config
        self.paths = paths or LoomPaths.from_env()
        self.project_root = config.project_root
        self._factory = provider_factory or config_providers(config)
        self._store = open_thread_store(self.paths, config)
        self._specs: dict[str, SessionSpec] = {}
        self._manager = SessionManager(
            store=self._store,
            provider_factory=self._factory,
            policy_factory=self._policy,
            config=config,
        )
        self._manager.options.retry = RetryPolicy(max_retries=config.model.max_retries)
        self.bus = self._manager.bus
        self.threads = _Threads(self._store)
        self.repo = _Repo(config)
        self._pending_spec: SessionSpec | None = None

    @classmethod
    def open(cls, cwd: Path | None = None, overrides: dict[str, Any] | None = None) -> Workspace:
        return cls(load_config(cwd or Path.cwd(), overrides))

    def _policy(self, project_root: Path, auto_approve: bool) -> Any:
        from loom.session.factory import OpenOptions, build_policy

        spec = self._pending_spec or SessionSpec()
        options = OpenOptions(
            auto_approve=auto_approve, headless=spec.headless, on_refusal=spec.on_refusal,
            paths=self.paths,
        )
        try:
            return build_policy(self.config, options)
        except Exception as exc:
            raise LoomError(str(exc)) from exc

    def prewarm(self) -> None:
        """Build the default model's provider (imports its SDK, ~1-2 s) ahead of the
        first message; called on a worker thread once the page is being served."""
        with contextlib.suppress(Exception):  # reported properly when a session starts
            self._factory(self.config.model.default)

    def known_models(self) -> list[str]:
        from loom.llm.catalog import known_models

        return [f"{m.provider}:{m.model_id}" for m in known_models()]

    def check_model(self, model: str) -> None:
        from loom.session.factory import SetupError, check_model

        try:
            check_model(model, self._factory)
        except SetupError as exc:
            raise LoomError(str(exc)) from exc

    async def start_session(self, spec: SessionSpec) -> Any:
        from loom.session.factory import forward_sync_notices
        from loom.store.base import ThreadLocked
        from loom.tools.defaults import default_registry

        thread = self.threads.load(spec.thread) if spec.thread else None
        model = (spec.model or self.config.model.default).strip()
        if thread is not None and spec.model is None and thread.provider and thread.model:
            model = f"{thread.provider}:{thread.model}"
        await asyncio.to_thread(self.check_model, model)
        root = self.config.project_root
        if thread is not None and thread.workspace_root and Path(thread.workspace_root).is_dir():
            root = Path(thread.workspace_root)
        tools = default_registry(root, self.config)
        for tool in spec.extra_tools:
            tools.register(tool)
        self._pending_spec = spec
        try:
            session = await self._manager.start_session(
                model=model,
                project_path=str(root),
                tools=tools,
                auto_approve=spec.auto_approve,
                thread=thread,
                private=spec.private,
                mode=spec.mode,
                project_rules=load_project_rules(root, spec.cwd or root),
                max_turns=spec.max_turns,
            )
        except ThreadLocked as exc:
            raise LoomError(str(exc)) from exc
        except (ValueError, LookupError) as exc:
            raise LoomError(str(exc)) from exc
        finally:
            self._pending_spec = None
        forward_sync_notices(self._store, self.bus, session.id, asyncio.get_running_loop())
        return session

    async def resume(self, ref: str) -> Any:
        return await self.start_session(SessionSpec(thread=ref))

    def find_session(self, session_id: str) -> Any:
        return self._manager.find_session(session_id)

    def list_active(self) -> list[ActiveSession]:
        active = []
        for row in self._manager.list_active():
            session = self._manager.find_session(row["id"])
            title = session.thread.metadata.title if session is not None else ""
            active.append(ActiveSession(title=title or "", **row))
        return active

    async def stop_session(self, session_id: str) -> None:
        await self._manager.stop_session(session_id)

    async def shutdown(self) -> None:
        await self._manager.shutdown()
        close = getattr(self._store, "close", None)
        if close is not None and type(self._store).__name__ != "LocalThreadStore":
            close()

