"""SessionOptions: the knobs of a session that are not part of seed 001's API."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom.config import ContextSection, RepoSection
from loom.core.secrets import MIN_SECRET_CHARS, secrets_in
from loom.llm.base import CacheTtl
from loom.llm.retry import RetryPolicy
from loom.providers import BUILTIN
from loom.session.runtime.context import RepoMapHook
from loom.tools.services import ToolServices

if TYPE_CHECKING:
    from loom.config import LoomConfig
    from loom.hooks import LifecycleHooks
    from loom.prompts import ProjectInstructions
    from loom.session.runtime.checkpointing import Checkpointer
    from loom.store.images import ImageStore


def _default(section: Any, key: str) -> Any:
    """The default of a config key: defaults live in loom.config, once."""
    return section.model_fields[key].default


# A post-tools hook: called with the Session after each round of tool calls; what it
# returns (a string, or an awaitable of one) is a note for the model, None nothing.
PostToolsHook = Callable[[Any], Any]
PlanApproval = Callable[[Any], Awaitable[tuple[str, str]]]


@dataclass(frozen=True)
class SessionOptions:
    """Built whole before the session (`SessionDefaults.for_session`) and never changed
    after: a session's collaborators come in here, typed, or through its constructor."""

    tool_timeout: float | None = 120.0  # seconds; a hung tool becomes an error result
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    stall_timeout: float | None = 120.0  # seconds with nothing streamed: a transient error
    cache_ttl: CacheTtl = "5m"  # [model] cache_ttl: how long Anthropic keeps a cached prefix
    max_tool_rounds: int = 200  # model responses with tool calls in one turn
    reserved_output_tokens: int = _default(ContextSection, "reserved_output_tokens")
    max_context_tokens: int | None = None  # None: the model catalog's window
    rules: str | None = None  # instructions given as text; None: the project's files
    # read at start (AGENTS.md, CLAUDE.md, LOOM.md and the person's own); None: read
    # from the project root when first needed
    instructions: ProjectInstructions | None = None
    cwd: Path | None = None  # where the person started Loom (instructions, environment)
    # (how commands run, whether they have the network) for the environment block
    sandbox_summary: tuple[str, str] = ("not known", "not known")
    extra_system: str = ""  # more system text after the environment (a sub-agent's brief)
    # a sub-agent's brief sent in its first context block instead, so its system text is
    # its parent's, byte for byte (the parent's cached prefix serves it)
    context_brief: str = ""
    # what routes requests to a provider's prompt cache (OpenAI's prompt_cache_key); "":
    # the thread's id. A sub-agent's is its parent's, whose prefix it shares.
    cache_key: str = ""
    # [providers.openai-compatible] text_tool_calls: <tool_call> blocks in the text are calls
    text_tool_calls: bool = False
    # [models."provider:model"] images: models told to take images (or not)
    image_models: dict[str, bool] = field(default_factory=dict)
    # how hard a reasoning model thinks at the start (loom.llm.effort): model.effort,
    # --effort, an agent file's `effort:`; None: the model family's default. /effort
    # changes `Session.effort`.
    effort: str | None = None
    image_store: ImageStore | None = None  # attached images kept; None: in memory only
    rules_max_tokens: int = _default(ContextSection, "rules_max_tokens")
    repo_map: RepoMapHook | None = None  # (budget, focus files, identifiers) -> map text
    repo_map_tokens: int = _default(RepoSection, "map_tokens")  # 0 turns the map off
    repo_map_timeout: float = 10.0  # seconds; a slower map is skipped for that call
    decision_context: Callable[[int], str] | None = None  # token budget -> the zone's text
    decision_tokens: int = 1024  # config context.decision_tokens; 0 turns the zone off
    system_prompt: str | None = None  # None: loom.prompts' text for the model's family
    # a custom agent's text in place of the family's (environment, brief, instructions
    # still follow it); None: the family's
    system_base: str | None = None
    # None: the provider's own for the model in use (loom.session.runtime.role_models)
    architect_model: str | None = None
    editor_model: str | None = None
    architect_plan_attempts: int = 3  # asks again this often when the plan is not JSON
    git_snapshot: bool = True  # after every tool that can change the tree, and at stop
    post_tools_hooks: Sequence[PostToolsHook] = ()
    lifecycle_hooks: LifecycleHooks | None = None  # [[hooks.EVENT]]; None: none
    compaction: bool = False  # summarise old turns with the fast model (context.compaction)
    auto_commit: bool = False  # [git] auto_commit: commit the turn's changes when it ends
    checkpointer: Checkpointer | None = None  # snapshots for undo
    # architect mode: asked with each plan before any step runs; answers ("yes", ""),
    # ("no", "") or ("edit", what to change). None (headless, --yes): carried out at once.
    plan_approval: PlanApproval | None = None
    # the session's collaborators its tools reach (decision graph, sub-agents, editor)
    tool_services: ToolServices = field(default_factory=ToolServices)
    # name -> value of every secret Loom knows; masked in each message before it is saved,
    # sent to a model or synced (`loom.core.secrets`)
    secrets: dict[str, str] = field(default_factory=lambda: secrets_in(os.environ))

    @classmethod
    def from_config(cls, config: LoomConfig) -> SessionOptions:
        """The options [model], [context], [repo] and [shell] configure."""
        # The shell tool stops its command at shell.timeout and kills it cleanly; the
        # session's outer timeout must not fire first.
        tool_timeout = cls.tool_timeout
        if tool_timeout is not None:
            tool_timeout = max(tool_timeout, config.shell.timeout + 15)
        return cls(
            tool_timeout=tool_timeout,
            retry=RetryPolicy(max_retries=config.model.max_retries),
            stall_timeout=config.model.stall_timeout,
            cache_ttl=config.model.cache_ttl,
            architect_model=config.model.architect,
            editor_model=config.model.editor,
            reserved_output_tokens=config.context.reserved_output_tokens,
            max_context_tokens=config.context.max_context_tokens,
            rules_max_tokens=config.context.rules_max_tokens,
            decision_tokens=config.context.decision_tokens,
            repo_map_tokens=config.repo.map_tokens,
            secrets=known_secrets(config),
            compaction=config.context.compaction,
            effort=config.model.effort,
            image_models={
                name: said.images for name, said in config.models.items() if said.images is not None
            },
            text_tool_calls=any(
                getattr(config.providers.for_provider(decl.name), "text_tool_calls", False)
                for decl in BUILTIN
                if decl.text_tool_calls
            ),
            auto_commit=config.git.auto_commit,  # [hooks] post_tools: SessionDefaults
        )


def known_secrets(config: LoomConfig) -> dict[str, str]:
    """Secret variables of the environment, API keys from configuration files and the
    sync token from `loom login`."""
    found = secrets_in(os.environ)
    for decl in BUILTIN:  # its key variables even where their names look harmless
        found.update(
            (var, value)
            for var in decl.secret_vars
            if len(value := os.environ.get(var, "").strip()) >= MIN_SECRET_CHARS
        )
    settings = [(decl.name, key) for decl in BUILTIN for key in decl.secret_settings] + [
        (name, "api_key") for name in config.providers.plugins()
    ]
    for name, key in settings:
        value = getattr(config.providers.for_provider(name), key, None)
        if isinstance(value, str) and len(value) >= MIN_SECRET_CHARS:
            found[f"{name.upper().replace('-', '_')}_{key.upper()}"] = value
    with contextlib.suppress(Exception):  # unreadable credentials: nothing to add
        from loom.paths import LoomPaths
        from loom.store.credentials import load_credentials

        creds = load_credentials(LoomPaths.from_env())
        if creds is not None and len(creds.token) >= MIN_SECRET_CHARS:
            found["LOOM_SYNC_TOKEN"] = creds.token
    return found
