"""Compose a real session from configuration: provider, tools, permissions, thread store.

Every face (REPL, `loom run`, resume, web, ACP) builds its session here, so a config key
is honoured the same way everywhere:

    config = load_config(cwd, {"model.default": flag_model})
    handle = await open_session(config, OpenOptions(private=True, headless=True))
    handle.on_event(print)
    answer = await handle.send("fix the failing test")
    await handle.close()

`SessionHandle` is the narrow surface the faces need over `Session`/`SessionManager`.
Problems a person must fix (bad model name, missing key, unknown thread) are raised as
`SetupError` with a one-line message before any turn starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loom.config import LoomConfig, load_project_rules
from loom.paths import LoomPaths

EventCallback = Callable[[Any], None]
log = logging.getLogger(__name__)


class SetupError(Exception):
    """A session cannot start; the message says what is wrong and what to do."""


@dataclass
class OpenOptions:
    model: str | None = None  # provider:model-id; None: config.model.default
    private: bool = False  # the thread never syncs
    auto_approve: bool = False  # --yes: every tool but the dangerous-command floor runs
    headless: bool = False  # nobody can answer a prompt: what would ask is refused
    thread_id: str | None = None  # continue this thread (id or unique prefix)
    max_turns: int | None = None  # model requests per user message (loom run --max-turns)
    cwd: Path | None = None
    paths: LoomPaths | None = None
    provider_factory: Callable[[str], Any] | None = None  # tests: model name -> Provider
    on_refusal: Callable[[str, str | None, str], None] | None = None  # (tool, subject, why)


# -- the pieces -----------------------------------------------------------------------


def resolve_model(config: LoomConfig, model: str | None) -> str:
    return (model or config.model.default).strip()


def provider_factory(config: LoomConfig) -> Callable[[str], Any]:
    """A function from `provider:model-id` to a Provider, using [providers.*] settings."""

    def build(model: str) -> Any:
        from loom.llm.registry import create_provider, parse_model_name

        name, _model_id = parse_model_name(model)
        settings = config.providers.for_provider(name)
        return create_provider(name, api_key=settings.api_key, base_url=settings.base_url)

    return build


def check_model(model: str, factory: Callable[[str], Any]) -> None:
    """Fail early, in one line, on a malformed name, unknown provider or missing key."""
    from loom.llm.base import LlmError

    try:
        factory(model)
    except (LlmError, ValueError) as exc:
        raise SetupError(str(exc)) from exc


class PrebuiltProvider:
    """A provider factory whose first provider is built on a worker thread, started at
    once; `wait()` joins it and turns a configuration problem into SetupError."""

    def __init__(self, factory: Callable[[str], Any], model: str) -> None:
        self.factory = factory
        self.model = model
        self._provider: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._build, name="loom-provider", daemon=True)
        self._thread.start()

    def _build(self) -> None:
        try:
            self._provider = self.factory(self.model)
        except BaseException as exc:  # re-raised in the caller's thread by wait()
            self._error = exc

    def wait(self) -> Any:
        from loom.llm.base import LlmError

        self._thread.join()
        if isinstance(self._error, LlmError | ValueError):
            raise SetupError(str(self._error)) from self._error
        if self._error is not None:
            raise self._error
        return self._provider

    def __call__(self, model: str) -> Any:
        if model == self.model:
            return self.wait()
        return self.factory(model)


def build_policy(config: LoomConfig, options: OpenOptions) -> Any:
    from loom.permissions import GrantStore, PermissionPolicy

    paths = options.paths or LoomPaths.from_env()
    try:
        policy = PermissionPolicy(
            GrantStore(config.project_root, database=paths.database),
            auto_approve_tools=config.permissions.auto_approve,
            deny_rules=config.permissions.deny,
            auto_approve_all=options.auto_approve,
            # nobody is there to see a dangerous command in a headless run: refuse it
            dangerous="deny" if options.headless else "ask",
        )
    except ValueError as exc:  # a malformed deny rule
        raise SetupError(f"[permissions] deny: {exc}") from exc
    if options.headless:
        return HeadlessPolicy(policy, options.on_refusal)
    return policy


HEADLESS_REASON = (
    "nobody can approve it in a headless run (loom run without --yes); do not retry it, "
    "finish what you can without it and say what is left"
)


class HeadlessPolicy:
    """A policy for runs without a person: what would ask is refused, with a reason the
    model reads, and `on_refusal` hears about it (stderr, the result's denials)."""

    def __init__(self, policy: Any, on_refusal: Callable[[str, str | None, str], None] | None):
        self.policy = policy
        self.on_refusal = on_refusal

    def check(self, tool: Any, args: dict[str, Any]) -> Any:
        from loom.permissions import Decision, Verdict

        verdict = self.policy.check(tool, args)
        if verdict.decision is Decision.ASK:
            verdict = Verdict(Decision.DENY, HEADLESS_REASON, verdict.subject)
        if verdict.decision is Decision.DENY and self.on_refusal is not None:
            self.on_refusal(tool.name, verdict.subject, verdict.reason)
        return verdict

    def decide(self, tool: Any, args: dict[str, Any]) -> Any:
        return self.check(tool, args).decision

    def record(self, *args: Any, **kwargs: Any) -> None:
        self.policy.record(*args, **kwargs)


def load_thread(store: Any, ref: str) -> Any:
    from loom.store.base import AmbiguousThreadId, ThreadNotFound

    try:
        thread = store.load(store.resolve(ref))
    except (ThreadNotFound, AmbiguousThreadId, ValueError) as exc:
        raise SetupError(str(exc)) from exc
    if thread is None:
        raise SetupError(str(ThreadNotFound(ref)))
    return thread


# -- the handle the faces use -----------------------------------------------------------


@dataclass
class SessionHandle:
    session: Any
    manager: Any
    store: Any
    config: LoomConfig
    model: str
    tool_names: list[str]
    cwd: Path
    _factory: Callable[[str], Any]
    _unsubscribers: list[Callable[[], None]] = field(default_factory=list)
    _watcher: Any = None
    _closing: bool = False

    @property
    def id(self) -> str:
        return self.session.id

    @property
    def thread(self) -> Any:
        return self.session.thread

    @property
    def thread_id(self) -> str:
        return self.session.thread.id

    def on_event(self, callback: EventCallback) -> None:
        """`callback(event)` for each event, as it is published."""
        self._unsubscribers.append(self.session.subscribe(callback))

    async def send(self, text: str) -> str:
        return await self.session.send_message(text)

    @property
    def can_continue(self) -> bool:
        return bool(self.session.can_continue)

    async def continue_turn(self) -> str:
        return await self.session.continue_turn()

    def respond_to_permission(self, action: str, meta: dict[str, Any] | None = None) -> None:
        from loom.session import NoPendingPermission

        # NoPendingPermission: the turn was interrupted while the question was open
        with contextlib.suppress(NoPendingPermission):
            self.session.respond_to_permission(action, meta or {})

    def interrupt(self) -> bool:
        return self.session.interrupt()

    def set_mode(self, mode: str) -> None:
        self.session.set_mode(mode)

    def get_mode(self) -> str:
        return self.session.get_mode()

    def update_model(self, model: str) -> None:
        check_model(model, self._factory)
        self.session.update_model(model)
        self.model = model

    def history(self) -> list[Any]:
        return list(self.session.get_history())

    async def watch_repo(self) -> None:
        """Keep the repo index current while this session lives ([repo] watch_enabled);
        changes are published on the `repo:updates` topic. For long-lived faces."""
        if not self.config.repo.watch_enabled:
            return
        loop = asyncio.get_running_loop()
        bus = self.manager.bus

        def start() -> Any:
            from loom.repointel import start_watcher

            return start_watcher(
                self.config.project_root, lambda u: bus.publish("repo:updates", u), loop=loop
            )

        try:
            watcher = await asyncio.to_thread(start)  # the first scan can take a while
        except Exception as exc:  # no watcher: the index is refreshed on each use instead
            log.warning("not watching %s for changes: %s", self.config.project_root, exc)
            return
        if self._closing:
            watcher.stop()
        else:
            self._watcher = watcher

    async def close(self) -> None:
        """Stop the session (answers open calls, snapshots git, saves), the watcher, any
        language servers the tools started, and the store."""
        self._closing = True
        for unsubscribe in self._unsubscribers:
            unsubscribe()
        self._unsubscribers.clear()
        await self.manager.shutdown()
        if self._watcher is not None:
            self._watcher.stop()
        lsp = sys.modules.get("loom.lsp.supervisor")  # only if a tool started one
        if lsp is not None:
            await lsp.aclose_project(self.config.project_root)
        from loom.store.local import LocalThreadStore

        # a syncing store has a worker thread to stop; the local store's SQLite
        # connection belongs to the save thread and goes with the process
        if not isinstance(self.store, LocalThreadStore):
            self.store.close()


def forward_sync_notices(store: Any, bus: Any, session_id: str, loop: Any) -> None:
    """Publish the syncing store's notices (conflicts merged, rejected pushes, a refused
    token) as `sync_error` events on the session's topic, so every face shows them.
    The store calls back from its worker thread, hence `call_soon_threadsafe`."""
    if not hasattr(store, "on_event"):
        return  # the local store never syncs
    from loom.core.events import topic_for

    topic = topic_for(session_id)

    def forward(notice: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is gone: the run has ended
            loop.call_soon_threadsafe(bus.publish, topic, notice.as_event(session_id))

    store.on_event = forward


async def open_session(config: LoomConfig, options: OpenOptions | None = None) -> SessionHandle:
    """Build and start one session as configured; raises SetupError on bad input."""
    from loom.session import SessionManager
    from loom.store.base import ThreadLocked
    from loom.store.factory import open_thread_store

    options = options or OpenOptions()
    paths = options.paths or LoomPaths.from_env()
    cwd = (options.cwd or Path.cwd()).resolve()
    factory = options.provider_factory or provider_factory(config)
    store = open_thread_store(paths, config)
    thread = load_thread(store, options.thread_id) if options.thread_id else None
    model = resolve_model(config, options.model)
    if thread is not None and options.model is None and thread.provider and thread.model:
        model = f"{thread.provider}:{thread.model}"  # a resumed thread keeps its model
    # Building the provider imports its SDK, the slowest step of start-up: do it on a
    # worker thread while the tools, the policy and the session are put together.
    prebuilt = PrebuiltProvider(factory, model)
    if thread is not None and thread.workspace_root and Path(thread.workspace_root).is_dir():
        # a resumed thread works where it started, wherever `loom resume` runs
        config = config.model_copy(update={"project_root": Path(thread.workspace_root)})
    from loom.tools.defaults import default_registry

    tools = default_registry(config.project_root, config)
    try:
        prebuilt.wait()  # SetupError (bad name, unknown provider, no key) before any turn
    except SetupError as exc:
        if options.model is None and thread is None:  # the name came from configuration
            raise SetupError(
                f"{exc} (model.default is {model!r}; `loom config` shows where it is set)"
            ) from exc
        raise
    manager = SessionManager(
        store=store,
        provider_factory=prebuilt,
        policy_factory=lambda: build_policy(config, options),
        config=config,
    )
    from loom.llm.retry import RetryPolicy

    manager.options.retry = RetryPolicy(max_retries=config.model.max_retries)
    try:
        session = await manager.start_session(
            model=model,
            project_path=str(config.project_root),
            tools=tools,
            auto_approve=options.auto_approve,
            thread=thread,
            private=options.private,
            project_rules=load_project_rules(config.project_root, cwd),
            max_turns=options.max_turns,
        )
    except (ThreadLocked, ValueError, LookupError) as exc:
        raise SetupError(str(exc)) from exc
    forward_sync_notices(store, manager.bus, session.id, asyncio.get_running_loop())
    if options.private and not session.thread.is_private:
        from loom.core.thread import ThreadVisibility

        # --private on resume: from now on this thread never leaves the machine
        session.thread.is_private = True
        session.thread.visibility = ThreadVisibility.PRIVATE
    return SessionHandle(session, manager, store, config, model, tools.names(), cwd, prebuilt)
