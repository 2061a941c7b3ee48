"""Opening the REPL's session in the background, so the prompt appears first.

Reading the configuration, importing the provider's SDK (0.3-3 s on a busy machine) and
putting the session together run while the person already types; a message sent
before they are done waits for them. Imports run on a worker thread so the prompt stays
responsive; the session itself is assembled on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class StartFailed(Exception):
    """The session could not start; the message says what to fix."""


@dataclass
class StartRequest:
    model: str | None = None
    private: bool = False
    thread_id: str | None = None
    continue_latest: bool = False  # `loom -c`: the newest thread of this project
    cwd: Path | None = None


class SessionStarter:
    def __init__(self, request: StartRequest) -> None:
        self.request = request
        self.cwd = (request.cwd or Path.cwd()).resolve()
        self.config: Any = None
        self.handle: Any = None
        self.warnings: list[str] = []
        self._task: asyncio.Task[Any] | None = None
        self._on_ready: list[Callable[[], Any]] = []
        self._on_failed: list[Callable[[], Any]] = []

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.ensure_future(self._open())
            self._task.add_done_callback(self._finished)

    def on_failed(self, callback: Callable[[], Any]) -> None:
        """`callback()` if the session cannot start (`wait()` then says why)."""
        self._on_failed.append(callback)

    def _finished(self, task: asyncio.Task[Any]) -> None:
        if task.cancelled() or task.exception() is not None:
            for callback in self._on_failed:
                callback()

    def on_ready(self, callback: Callable[[], Any]) -> None:
        """`callback()` once the session is open (not called when it fails)."""
        self._on_ready.append(callback)

    @property
    def ready(self) -> bool:
        return self.handle is not None

    @property
    def done(self) -> bool:
        return self._task is not None and self._task.done()

    async def wait(self) -> Any:
        """The open session's handle; raises StartFailed."""
        self.start()
        assert self._task is not None
        return await asyncio.shield(self._task)

    async def cancel(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task

    async def _open(self) -> Any:
        from_thread = await asyncio.to_thread(self._prepare)
        config, factory = from_thread
        from loom.session.factory import OpenOptions, SetupError, open_session

        thread_id = self.request.thread_id
        if self.request.continue_latest and thread_id is None:
            thread_id = await asyncio.to_thread(self._latest_thread, config)
        try:
            handle = await open_session(
                config,
                OpenOptions(
                    model=self.request.model,
                    private=self.request.private,
                    thread_id=thread_id,
                    cwd=self.cwd,
                    provider_factory=factory,
                ),
            )
        except SetupError as exc:
            raise StartFailed(str(exc)) from exc
        self.config, self.handle = config, handle
        for callback in self._on_ready:
            callback()
        return handle

    def _prepare(self) -> tuple[Any, Any]:
        """On a worker thread: the configuration, the heavy imports, the provider."""
        from loom.config import ConfigError, load_config

        try:
            config = load_config(self.cwd, {"model.default": self.request.model})
        except ConfigError as exc:
            raise StartFailed(str(exc)) from exc
        self.warnings = list(config.warnings)
        import rich.console  # noqa: F401  (the renderer's, imported here off the loop)

        import loom.session.factory as factory_module
        import loom.tools.defaults  # noqa: F401

        build = factory_module.provider_factory(config)
        model = factory_module.resolve_model(config, self.request.model)
        built: dict[str, Any] = {}
        with contextlib.suppress(Exception):  # a bad name is reported by open_session
            built[model] = build(model)  # imports the SDK: the slowest step

        def factory(name: str) -> Any:
            return built[name] if name in built else build(name)

        return config, factory

    def _latest_thread(self, config: Any) -> str:
        from loom.session.recent import newest_thread_in

        found = newest_thread_in(config.project_root)
        if found is None:
            raise StartFailed(
                f"no thread of this project ({config.project_root}) to continue; "
                "start one with `loom`"
            )
        return found
