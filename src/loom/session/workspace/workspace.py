"""Workspace: the one front door every face holds (REPL, `loom run`, web, MCP, ACP).

Built once from a LoomConfig and cheap to build (stores, SDKs, tree-sitter and language
servers load on first use), it owns the thread store, the tool set, provider
construction, the grants and the repo services, and runs many sessions at once:

    ws = Workspace.open(cwd=Path.cwd(), overrides={"model.default": "openai:gpt-5"})
    session = await ws.start_session(SessionSpec(headless=True))
    session.subscribe(print)
    answer = await session.send_message("fix the failing test")
    await ws.shutdown()

History, sync, grants and the repo map are `ws.threads`, `ws.sync`, `ws.grants` and
`ws.repo`. Problems a person must fix are `LoomError`s raised before any turn starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom import startup_gc
from loom.core.errors import BadInput, LoomError, NotFound, SetupError
from loom.paths import LoomPaths
from loom.session.runtime.bus import EventBus
from loom.session.workspace.decisions_api import DecisionsApi
from loom.session.workspace.grants_api import GrantsApi
from loom.session.workspace.registry import Running, SessionRegistry, run_cleanups
from loom.session.workspace.repo_api import RepoApi
from loom.session.workspace.spec import ActiveSession, McpServerAsk, ParentLink, SessionSpec
from loom.session.workspace.sync_api import SyncApi
from loom.session.workspace.threads_api import ThreadsApi
from loom.session.workspace.worktrees_api import WorktreesApi

if TYPE_CHECKING:
    from loom.config import LoomConfig
    from loom.core.thread import Thread
    from loom.delegation import AgentCatalog, SkillCatalog
    from loom.llm.base import Provider
    from loom.mcp_client import ServerStatus
    from loom.sandbox import Sandbox
    from loom.session.assembly.decisions_hook import SessionDecisions
    from loom.session.assembly.plugins import Plugin
    from loom.session.runtime.options import SessionOptions
    from loom.session.runtime.permission_gate import ParentGate
    from loom.session.runtime.ports import PolicyPort
    from loom.session.runtime.session import Session
    from loom.session.workspace.session_options import SessionDefaults, SessionParts
    from loom.session.workspace.subagents import SubagentRunner
    from loom.store.base import ThreadStore
    from loom.tools.base import Tool, ToolRegistry, ToolSetup
    from loom.worktrees import Worktree

log = logging.getLogger(__name__)
REPO_UPDATES = "repo:updates"  # the bus topic the repo watcher publishes RepoUpdates on


class Workspace:
    """The one place a session is put together (`start_session`), for every face,
    `loom run`, sub-agents and tests. `provider_factory`, `store` and `session_options`
    (SessionOptions fields set over the configured ones) replace what the configuration
    would give: tests and benches script the model and tune timeouts with them."""

    def __init__(
        self,
        config: LoomConfig,
        paths: LoomPaths | None = None,
        provider_factory: Callable[[str], Provider] | None = None,
        *,
        store: ThreadStore | None = None,
        session_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.config = config
        self.paths = paths or LoomPaths.from_env()
        self.project_root: Path = config.project_root
        self.bus = EventBus()
        self._provider_factory = provider_factory
        self._prewarmed: dict[str, Provider] = {}  # built ahead by prewarm(), used once
        self._store: Any = store
        self._own_store = store is None  # opened here (first use), so closed here
        self._option_overrides = dict(session_options or {})
        if self._option_overrides:
            from loom.session.workspace.session_options import check_fields

            check_fields(self._option_overrides)  # TypeError names an unknown one
        self._defaults: SessionDefaults | None = None
        self._running = SessionRegistry()
        self._sandboxes: dict[Path, Sandbox] = {}  # project root -> its sandbox
        self.threads = ThreadsApi(self.paths, config, lambda: self._store)
        self.sync = SyncApi(self.paths, self.threads)
        self.grants = GrantsApi(self.paths)
        self.decisions = DecisionsApi(self.paths, self.project_root, self.threads)
        self.repo = RepoApi.for_config(config)
        self.worktrees = WorktreesApi(self.paths, self.project_root)
        self.worktree: Worktree | None = None  # the worktree this workspace works in
        self._factory_given = provider_factory is not None
        self._reload: Callable[[], LoomConfig] | None = None  # open(): read config again

    @classmethod
    def open(
        cls,
        cwd: Path | None = None,
        overrides: dict[str, Any] | None = None,
        *,
        paths: LoomPaths | None = None,
        provider_factory: Callable[[str], Provider] | None = None,
        worktree: str | None = None,
        trust: bool | None = None,
        project_root: Path | None = None,
        thread: str | None = None,
    ) -> Workspace:
        """The workspace of the project around `cwd`, with every config layer read;
        ConfigError (a LoomError) for a broken one. `warnings` lists ignored keys.
        `worktree`: work in the project's git worktree of that name (made on the
        branch loom/NAME when it does not exist yet); its threads record it.
        `trust`: the project's powerful settings apply when the person trusts the
        project (None: as recorded; True: for this process, `--trust`; False: never);
        `ws.trust` says which were held back. `project_root`: the folder the person
        named as the project (`--project-root`), instead of the one around `cwd`.
        `thread`: the thread (id or prefix) this workspace is opened to resume: the
        workspace of *its* project, wherever `cwd` is (its settings and trust govern
        it: loom.session.workspace.thread_home); SetupError when that folder is gone."""
        from loom.config import find_project, load_config

        if thread is not None and worktree is None and project_root is None:
            from loom.session.workspace.thread_home import thread_project

            home = thread_project(thread, paths)
            here = (cwd or Path.cwd()).resolve()
            if home is not None and find_project(home)[0] != find_project(here)[0]:
                cwd, project_root = home, home
        chosen = None
        if worktree is not None:
            from loom.worktrees import ensure

            chosen, _created = ensure((cwd or Path.cwd()).resolve(), worktree,
                                      (paths or LoomPaths.from_env()).data)  # fmt: skip
            cwd = chosen.path
        config = load_config(cwd, overrides, paths=paths, trust=trust, project_root=project_root)
        workspace = cls(config, paths, provider_factory)
        workspace.worktree = chosen
        if chosen is not None:  # its threads' decisions are the repository's graph
            workspace.decisions.scope = str(chosen.repo)
        workspace._reload = lambda: load_config(
            cwd, overrides, paths=paths, project_root=project_root
        )
        return workspace

    @classmethod
    def for_data(cls, paths: LoomPaths | None = None) -> Workspace:
        """A workspace for commands that touch only Loom's own data (history, sync,
        grants): default configuration, no project config read."""
        from loom.config import LoomConfig

        return cls(LoomConfig(project_root=Path.cwd()), paths)

    @property
    def warnings(self) -> list[str]:
        return list(self.config.warnings)

    @property
    def trust(self) -> Any:
        """The project's powerful settings and whether they apply (loom.trust
        ProjectTrust: state, items, notice(), question_lines(), trust(), decline());
        None for a workspace built without reading a project."""
        return self.config.trust

    def answer_trust(self, trusted: bool) -> None:
        """The person's answer to the project's trust question (each face asks in its own
        way), remembered for these exact settings. Trusted: the configuration is read
        again, so sessions started from now on get the project's programs, endpoints and
        permissions (running ones keep what they started with: `restart_session` for
        one that has no message yet; a sync server it names applies at the next start).
        OSError when the answer cannot be recorded."""
        trust = self.config.trust
        if trust is None or not trust.items:
            return
        if not trusted:
            trust.decline()
            return
        trust.trust()
        if self._reload is None:
            return  # built from a hand-made config: nothing to read again
        self.config = self._reload()
        self.threads.config = self.config
        self.repo.config = self.config  # the project's language servers, from now on
        if not self._factory_given:
            self._provider_factory = None  # a trusted base_url / api_key
            self._prewarmed.clear()
        self._defaults = None  # what sessions start with, read again

    # -- owned parts, built on first use ----------------------------------------------

    @property
    def store(self) -> Any:
        """The thread store sessions save to: syncing when logged in, else local."""
        if self._store is None:
            from loom.store.factory import open_thread_store

            self._store = open_thread_store(self.paths, self.config)
            self._store_forwarding()
        return self._store

    @property
    def store_is_open(self) -> bool:
        return self._store is not None

    @property
    def session_defaults(self) -> SessionDefaults:
        """What every new session starts with: the configuration's options (again after a
        trust), the Workspace's `session_options` on top."""
        if self._defaults is None:
            from loom.session.workspace.session_options import SessionDefaults

            self._defaults = SessionDefaults.configured(
                self.config, self.paths.data, lambda: self.repo.settings,
                self._option_overrides,
            )  # fmt: skip
        return self._defaults

    def provider_factory(self) -> Callable[[str], Provider]:
        """`provider:model-id` -> a new Provider ([providers.*]); the one prewarm() built
        is handed out once."""
        build, prewarmed = self._builder(), self._prewarmed
        return lambda model: prewarmed.pop(model, None) or build(model)

    def _builder(self) -> Callable[[str], Provider]:
        if self._provider_factory is None:
            from loom.session.assembly.providers import provider_factory

            self._provider_factory = provider_factory(self.config)
        return self._provider_factory

    def tool_setup(self, project_root: Path, session_id: str = "") -> ToolSetup:
        from loom.tools.base import ToolSetup

        return ToolSetup(project_root, self.config, self.paths, session_id)

    def sandbox_for(self, project_root: Path | None = None) -> Sandbox:
        """The sandbox agent commands run in for a project root ([sandbox]; the first
        call per process checks that the OS sandbox starts, ~10-20 ms)."""
        root = Path(project_root or self.project_root).resolve()
        if root not in self._sandboxes:
            from loom.session.assembly.sandboxing import make_sandbox

            self._sandboxes[root] = make_sandbox(self.config, self.paths, root)
        return self._sandboxes[root]

    def runs_here(self, workspace_root: str | None) -> bool:
        """Is a thread recorded with this `workspace_root` this project's? Only those
        resume here (another project's settings and trust govern its threads:
        loom.session.workspace.thread_home); a face shows the others as elsewhere."""
        from loom.session.workspace.thread_home import belongs_to

        return belongs_to(Path(workspace_root) if workspace_root else None, self.project_root)

    def sandbox_notice(self) -> str | None:
        """One line a face shows at session start when agent commands will run
        unconfined (no sandbox here, or [sandbox] mode "ask"/"off"); None when confined."""
        return self.sandbox_for().notice()

    def confined_tools(
        self,
        project_root: Path,
        session_id: str = "",
        extra: Sequence[Tool] = (),
        *,
        sandbox: Sandbox | None = None,
    ) -> tuple[ToolSetup, Sandbox, ToolRegistry]:
        """The tools agent calls use in `project_root`, with the sandbox their shell and
        git commands run in: (setup, sandbox, tools). Pass the sandbox to `permission_policy`
        (its rules sit on top of the permissions). Every face that runs tools for
        someone (a session, `loom mcp serve`) assembles them here. `sandbox`: one to
        share (a sub-agent's parent's); else one of the session's own, with its own temp
        folder: the caller calls its `close()` when the session is over."""
        setup = self.tool_setup(project_root, session_id)
        own = sandbox is None
        if sandbox is None:
            sandbox = self.sandbox_for(project_root).for_session()
        setup.command_launcher = sandbox  # shell and git commands run inside it
        try:
            return setup, sandbox, self.tool_registry(setup, extra)
        except BaseException:
            if own:
                sandbox.close()
            raise

    def tool_registry(self, setup: ToolSetup, extra: Sequence[Tool] = ()) -> ToolRegistry:
        """Every `loom.tools` provider's tools for this setup (built-ins, repointel, lsp,
        then plugins; a broken one is logged and skipped), then `extra`."""
        from loom.session.assembly.toolset import session_toolset

        try:
            return session_toolset(setup, extra)
        except ValueError as exc:  # an extra tool's name is taken
            raise SetupError(str(exc)) from exc

    async def plugins(self) -> list[Plugin]:
        """Every plugin of every extension group, checked: what `loom plugins` shows.
        Tool providers are called for this project (and their cleanups run after)."""
        from loom.session.assembly.plugins import survey

        setup = self.tool_setup(self.project_root)
        try:
            return survey(setup)
        finally:
            await run_cleanups(setup.cleanups, "(plugins)")

    def agent_catalog(self, project_root: Path | None = None) -> AgentCatalog:
        """The agents the `task` tool offers in a project (built in, the person's, the
        project's), with the files skipped and why (`problems`)."""
        from loom.delegation import discover_agents

        return discover_agents(Path(project_root or self.project_root), self.paths.config)

    def skill_catalog(self, project_root: Path | None = None) -> SkillCatalog:
        """The skills the `skill` tool offers in a project, with the files skipped and why."""
        from loom.delegation import discover_skills

        return discover_skills(Path(project_root or self.project_root), self.paths.config)

    def definition_problems(
        self, project_root: Path | None = None, tools: Collection[str] | None = None
    ) -> list[str]:
        """Agent and skill files skipped in a project (and why), and name clashes: one
        line each, for a face's session header. `tools`: the session's tool names, to
        name a custom agent's `tools:` entry that fits none."""
        from loom.delegation.agents import tool_problems

        root = project_root or self.project_root
        agents = self.agent_catalog(root)
        unusable = tool_problems(agents, tools) if tools is not None else []
        return [*agents.problems, *unusable, *self.skill_catalog(root).problems]

    def known_models(self) -> list[str]:
        """`provider:model-id` of every model in the catalog (faces offer these; any
        other name may be typed)."""
        from loom.llm.catalog import known_models

        return [f"{m.provider}:{m.model_id}" for m in known_models()]

    def prewarm(self) -> None:
        """Import what sessions are assembled from and build the default model's provider
        now (it imports the SDK, 1-2 s), kept for the next session on that model, so a
        face's first message does not wait for it. Call it off the event loop. Problems
        surface when the session starts."""
        import loom.session.assembly.toolset
        import loom.session.runtime.session  # noqa: F401
        from loom.config import default_model

        model = default_model(self.config)
        with contextlib.suppress(Exception):
            self._prewarmed[model] = self._builder()(model)

    def check_model(self, model: str) -> None:
        """SetupError, in one line, for a malformed name, unknown provider or no key."""
        from loom.session.assembly.providers import check_model

        check_model(model, self._builder())

    # -- sessions ---------------------------------------------------------------------

    async def restart_session(self, session_id: str) -> Session:
        """Assemble a session that has no message yet again, on the same thread (same
        id), from the configuration as it is now: after the person trusted the project
        (ACP asks before the first turn). BadInput once it has messages."""
        running = self._running_or_fail(session_id)
        old = running.session
        if old.thread.messages:
            raise BadInput(
                f"session {session_id} has started its conversation",
                "the project's settings apply to sessions started from now on",
            )
        await self.stop_session(session_id)
        return await self.start_session(running.spec, fresh=old.thread)

    async def start_session(
        self, spec: SessionSpec | None = None, *, fresh: Thread | None = None
    ) -> Session:
        """Start a session (a new thread, or `spec.thread` continued). SetupError, Busy or
        NotFound when it cannot start; nothing is written until the first message.
        `fresh`: a new thread not saved yet, to start on (restart_session)."""
        from loom.prompts import load_instructions
        from loom.session.assembly.decisions_hook import SessionDecisions
        from loom.session.assembly.policy import permission_policy
        from loom.session.assembly.providers import PrebuiltProvider
        from loom.session.workspace.subagents import (
            SubagentRunner,
            child_gate,
            link_thread,
            narrowed,
        )

        spec = spec or SessionSpec()
        if self.config.sandbox.mode == "on":
            from loom.sandbox import detect_soon

            detect_soon()  # checking the OS sandbox overlaps with the provider's import
        cwd = (spec.cwd or Path.cwd()).resolve()
        thread = self._thread_to_resume(spec.thread) if spec.thread else fresh
        if spec.thread and thread is not None and spec.parent is None:
            from loom.session.workspace.thread_home import check_home

            check_home(thread, self.project_root)  # never governed by another project
        from loom.config import default_model

        model = default_model(self.config, spec.model)
        if thread is not None and spec.model is None and thread.provider and thread.model:
            model = f"{thread.provider}:{thread.model}"  # a resumed thread keeps its model
        # Building the provider imports its SDK, the slowest step of start-up: do it on a
        # worker thread while the tools, the policy and the session are put together.
        prebuilt = PrebuiltProvider(self.provider_factory(), model)
        parent = spec.parent  # a sub-agent's: loom.session.workspace.subagents
        root = spec.root or (parent.session.project_root if parent else self.project_root)
        if thread is not None and thread.workspace_root and Path(thread.workspace_root).is_dir():
            root = Path(thread.workspace_root)  # a resumed thread works where it started
            if not cwd.is_relative_to(root.resolve()):  # its LOOM.md, not the folder's
                cwd = root.resolve()
        try:
            # SetupError (bad name, unknown provider, no key) before any turn. Joined off
            # the event loop: the SDK import takes seconds on a cold start, and the other
            # sessions of a long-lived face (`loom web`) keep streaming meanwhile.
            await asyncio.to_thread(prebuilt.wait)
        except SetupError as exc:
            if spec.model is None and thread is None:  # the name came from configuration
                raise SetupError(
                    f"{exc} (model.default is {model!r}; `loom config` shows where it is set)"
                ) from exc
            raise
        if thread is None:  # made here so the tools know the session's id (= the thread's)
            try:
                thread = new_thread(root, model, spec.private)
            except ValueError as exc:  # a malformed model name
                raise SetupError(str(exc)) from exc
            if self.worktree is not None:
                thread.worktree = self.worktree.as_record()
            if parent is not None:
                link_thread(thread, parent)
        shared = self._parent_sandbox(parent, root)
        setup, sandbox, tools = self.confined_tools(
            root, thread.id, spec.extra_tools, sandbox=shared
        )
        if shared is None:  # the session's own temp folder goes with it, last
            setup.cleanups.insert(0, sandbox.close)
        try:
            if spec.tools is not None:  # a sub-agent's: never a tool its parent lacks
                tools = narrowed(tools, spec)
            if parent is not None:  # the parent's policy: grants, --yes, headless refusals
                policy = parent.session.permissions
            else:
                policy = permission_policy(
                    self.config,
                    self.paths.database,
                    root,
                    auto_approve=spec.auto_approve,
                    permission_mode=spec.permission_mode,
                    headless=spec.headless,
                    on_refusal=spec.on_refusal,
                    sandbox=sandbox,
                )
        except BaseException:
            await run_cleanups(setup.cleanups, thread.id)
            raise
        if spec.title:
            thread.metadata.title = spec.title
        if spec.private and not thread.is_private:
            from loom.core.thread import ThreadVisibility

            # --private on resume: from now on this thread never leaves the machine
            thread.is_private = True
            thread.visibility = ThreadVisibility.PRIVATE
        running = Running(None, spec, cleanups=list(setup.cleanups), sandbox=sandbox)  # type: ignore[arg-type]
        try:
            if thread.id in self._running:
                raise SetupError(f"session {thread.id!r} is already running; stop it first")
            instructions = await asyncio.to_thread(
                load_instructions, root, cwd, user_dir=self.paths.config
            )
            # every collaborator is built before the session, which is whole when built
            decisions = SessionDecisions(thread, self.paths)
            running.cleanups.append(decisions.close)
            runner = SubagentRunner(self, parent.depth if parent is not None else 0)
            parts = self._session_parts(thread, spec, decisions, runner)
            options = self.session_defaults.for_session(
                root,
                spec,
                instructions=instructions,
                cwd=cwd,
                sandbox_summary=sandbox_summary(sandbox, self.config),
                parts=parts,
            )
            if parent is not None:  # a child reads its parent's cached prefix (same key)
                theirs = parent.session
                options = replace(options, cache_key=theirs.options.cache_key or theirs.thread.id)
            before_turn = self._start_mcp(thread.id, tools, spec, running)
            session = await self._open(thread, model, root, tools, policy, options, prebuilt,
                                       running, gate=child_gate(parent, thread),
                                       before_turn=before_turn)  # fmt: skip
        except BaseException as exc:
            await run_cleanups(running.cleanups, thread.id)
            if isinstance(exc, LoomError):  # ThreadLocked is one (Busy)
                raise
            if isinstance(exc, ValueError | LookupError):
                raise SetupError(str(exc)) from exc
            raise
        decisions.attach(session)  # they follow it; nothing is set on the session
        runner.attach(session)
        if parent is not None:  # the parent's environment snapshot: its system text exactly
            session.prompts.share_environment(parent.session.prompts)

        startup_gc.resume()  # the start-up's objects live as long as the process
        return session

    def _session_parts(
        self,
        thread: Thread,
        spec: SessionSpec,
        decisions: SessionDecisions,
        runner: SubagentRunner,
    ) -> SessionParts:
        """What a session's options carry that the Workspace builds: the store of attached
        images, the decision graph (its recorder, zone and post-tools hook) and what its
        tools reach (`ToolServices`)."""
        from loom.session.workspace.session_options import SessionParts
        from loom.store.images import image_store
        from loom.tools.services import ToolServices

        editor = spec.editor_files(thread.id) if spec.editor_files is not None else None
        return SessionParts(
            tool_services=ToolServices(
                decisions=decisions.recorder, subagents=runner, editor_files=editor
            ),
            image_store=image_store(self.paths.data),
            decision_context=decisions.context,
            post_tools_hooks=(decisions.after_tools,),
        )

    async def _open(
        self,
        thread: Thread,
        model: str,
        root: Path,
        tools: ToolRegistry,
        policy: PolicyPort | None,
        options: SessionOptions,
        provider_factory: Callable[[str], Provider],
        running: Running,
        *,
        gate: ParentGate | None = None,
        before_turn: Sequence[Callable[[], Awaitable[None]]] = (),
    ) -> Session:
        """Build the Session on its thread (holding the thread's writer lock), start it
        and register it."""
        from loom.session.runtime.session import Session

        store = self.store
        lock = store.acquire_writer(thread.id)
        try:
            session = Session(
                session_id=thread.id,
                thread=thread,
                store=store,
                provider_factory=provider_factory,
                tools=tools,
                permissions=policy,
                bus=self.bus,
                model=model,
                project_root=root.resolve(),
                options=options,
                save_executor=self._running.save_executor,
                gate=gate,
                before_turn=before_turn,
            )
            session.set_mode(running.spec.mode)
            await session.start()
        except BaseException:
            if lock is not None:
                lock.release()
            raise
        running.session, running.lock = session, lock
        self._running.add(running)
        return session

    def _parent_sandbox(self, parent: ParentLink | None, root: Path) -> Sandbox | None:
        """A sub-agent working in its parent's project shares the parent's sandbox (and
        so its temp folder); None for any other session."""
        if parent is None:
            return None
        running = self._running.get(parent.session.id)
        if running is None or running.sandbox is None:
            return None
        same = Path(root).resolve() == Path(parent.session.project_root).resolve()
        return running.sandbox if same else None

    def _start_mcp(
        self, session_id: str, tools: ToolRegistry, spec: SessionSpec, running: Running
    ) -> tuple[Callable[[], Awaitable[None]], ...]:
        """External MCP servers' tools join `tools`, the registry the session is built
        with, in the background (loom.mcp_client); returns what its first turn awaits. A
        sub-agent uses its parent's MCP tools and never starts servers."""
        if spec.parent is not None:
            running.parent_id = spec.parent.session.id
            return ()
        from loom.core.events import SessionEvent, topic_for
        from loom.session.assembly.mcp_wiring import start_session_mcp

        topic = topic_for(session_id)

        def publish(event: SessionEvent) -> None:
            self.bus.publish(topic, event)

        mcp = start_session_mcp(
            self.config,
            self.paths,
            tools,
            session_id=session_id,
            publish=publish,
            servers=spec.mcp_servers,
            on_notice=spec.on_mcp_notice,
            face_asks_approval=spec.asks_mcp_approval,
        )
        if mcp is None:
            return ()
        running.mcp = mcp.hub
        running.cleanups.append(mcp.hub.aclose)
        return (mcp.before_turn,)

    def mcp_servers(self, session_id: str) -> list[ServerStatus]:
        """This session's MCP servers as they stand: name, state (connecting, ready,
        needs approval, failed, ...), tool count, tokens, detail (loom.mcp_client
        ServerStatus rows); empty when it has none."""
        hub = self._running_or_fail(session_id).mcp
        return hub.statuses() if hub else []

    def mcp_awaiting_approval(self, session_id: str) -> list[McpServerAsk]:
        """The project's MCP servers (.mcp.json, .loom.toml) this session did not start
        because the person never approved them: each face asks in its own way."""
        hub = self._running_or_fail(session_id).mcp
        return [McpServerAsk.of(spec) for spec in hub.awaiting_approval()] if hub else []

    def approve_mcp_server(self, session_id: str, name: str) -> McpServerAsk:
        """Trust the project's server `name`: approved for this project (later sessions
        start it too) and started now in this session, its tools joining when ready."""
        hub = self._running_or_fail(session_id).mcp
        try:
            if hub is not None:
                return McpServerAsk.of(hub.approve(name))
        except KeyError:
            pass
        raise NotFound(
            f"no MCP server {name!r} is waiting for approval in this session",
            "see which are with `loom mcp list`",
        )

    def _running_or_fail(self, session_id: str) -> Running:
        running = self._running.get(session_id)
        if running is None:
            raise NotFound(f"no active session {session_id!r}", "list them with list_active()")
        return running

    async def resume(self, thread: str, **spec: Any) -> Session:
        """Continue a thread (id or unique prefix): `start_session(SessionSpec(thread=...))`."""
        return await self.start_session(SessionSpec(thread=thread, **spec))

    def find_session(self, session_id: str) -> Session | None:
        running = self._running.get(session_id)
        return running.session if running is not None else None

    def list_active(self) -> list[ActiveSession]:
        """Every running session; a sub-agent's names its parent (`parent_id`)."""
        return [
            ActiveSession(
                id=r.session.id,
                thread_id=r.session.thread.id,
                title=r.session.thread.title,
                status=r.session.get_status(),
                model=r.session.model,
                mode=r.session.get_mode(),
                parent_id=r.parent_id,
            )
            for r in self._running
        ]

    def on_close(self, session_id: str, cleanup: Callable[[], Any]) -> None:
        """Run `cleanup()` (sync or async) when the session stops."""
        self._running_or_fail(session_id).cleanups.append(cleanup)

    async def stop_session(self, session_id: str) -> None:
        """Stop a session: interrupt its turn, answer open calls, snapshot git, save;
        then its cleanups (MCP servers, sub-agents, the decisions hook) run."""
        await self._running.stop(session_id)

    async def shutdown(self) -> None:
        """Stop every session, the repo watcher, language servers and the store."""
        for session_id in self._running.ids():
            if session_id in self._running:  # stopping a parent stops its sub-agents
                await self.stop_session(session_id)
        self._running.close()  # the saves in flight are done
        self.repo.stop_watching()
        self.decisions.close()
        if not self._own_store:
            return  # the store it was given is its giver's to close
        store, self._store = self._store, None
        from loom.store.local import LocalThreadStore

        # a syncing store has a worker thread to stop; the local store's SQLite
        # connection belongs to the save thread and goes with the process
        if store is not None and not isinstance(store, LocalThreadStore):
            store.close()

    async def watch_repo(self) -> bool:
        """Keep the repo index current ([repo] watch_enabled); each change is published
        on the bus topic `repo:updates`. For long-lived faces. False when not watching."""

        def publish(update: Any) -> None:
            self.bus.publish(REPO_UPDATES, update)

        return await self.repo.watch(publish)

    # -- helpers ----------------------------------------------------------------------

    def _thread_to_resume(self, ref: str) -> Thread:
        from loom.session.workspace.threads_api import person_errors
        from loom.store.base import ThreadNotFound

        store = self.store
        try:
            with person_errors():
                thread = store.load(store.resolve(ref))
                if thread is None:
                    raise ThreadNotFound(ref)
        except NotFound as exc:
            raise SetupError(str(exc)) from exc
        except ValueError as exc:
            raise SetupError(str(exc)) from exc
        return thread

    def _store_forwarding(self) -> None:
        """Publish the syncing store's notices (conflicts merged, rejected pushes, a refused
        token) as `sync_error` events on the topic of the session of that thread (every
        session's when none has it), so every face shows them. The store calls back from
        its worker thread, hence `call_soon_threadsafe`."""
        if not hasattr(self._store, "on_event"):
            return  # the local store never syncs
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop: nobody to tell but the log
        from loom.core.events import topic_for

        def publish(notice: Any) -> None:
            sessions = [r.session for r in self._running]
            targets = [s for s in sessions if s.thread.id == notice.thread_id] or sessions
            for session in targets:
                self.bus.publish(topic_for(session.id), notice.as_event(session.id))

        def forward(notice: Any) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is gone: the run has ended
                loop.call_soon_threadsafe(publish, notice)

        self._store.on_event = forward


def new_thread(root: Path, model: str, private: bool) -> Thread:
    """A new thread (not saved yet) for `model` (provider:model-id) working in `root`."""
    from loom.core.thread import Thread
    from loom.llm.registry import parse_model_name

    provider, model_id = parse_model_name(model)
    where = str(Path(root or os.getcwd()).resolve())
    return Thread.new(
        workspace_root=where, cwd=where, provider=provider, model=model_id, is_private=private
    )


def sandbox_summary(sandbox: Any, config: LoomConfig) -> tuple[str, str]:
    """(how agent commands run, whether they reach the network), for the system
    prompt's environment block."""
    if sandbox is None or not getattr(sandbox, "active", False):
        problem = getattr(sandbox, "problem", "") or "no sandbox"
        return f"run without a sandbox ({problem}); they may ask first", "on"
    name = getattr(sandbox.backend, "name", "os sandbox")
    where = (
        f"run sandboxed ({name}): writes only inside the project and /tmp "
        "($TMPDIR: this session's own)"
    )
    if config.sandbox.network:
        return where, "on"
    return where, "off (a shell call may ask for it with network: true)"
