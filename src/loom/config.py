"""Layered configuration: defaults < user file < project file < environment < flags.

Files (TOML):
  user     `$XDG_CONFIG_HOME/loom/config.toml` (`LoomPaths.user_config_file`)
  project  the nearest `.loom.toml` walking up from the working directory, stopping at the
           git root (the project root). Project rules live next to it in `LOOM.md`.

Environment (each overrides the files; documented here because it is the reference):
  LOOM_MODEL                 model.default            e.g. "anthropic:claude-sonnet-4-6"
  LOOM_ARCHITECT_MODEL       model.architect
  LOOM_EDITOR_MODEL          model.editor
  LOOM_MAX_RETRIES           model.max_retries         0 fails at the first network error
  LOOM_AUTO_APPROVE          permissions.auto_approve  comma-separated tool names
  LOOM_SHELL_TIMEOUT         shell.timeout             seconds
  LOOM_REPO_WATCH            repo.watch_enabled        1/0, true/false
  LOOM_MAP_TOKENS            repo.map_tokens
  LOOM_SYNC_SERVER_URL       sync.server_url
  each built-in provider's key and base-URL variables  providers.NAME.api_key / base_url
  (ANTHROPIC_API_KEY, OPENAI_BASE_URL, ...: its declaration in loom.providers lists them;
  loom.llm.registry reads the same, so a key in the environment beats one in a file).
A provider plugin's table, `[providers.NAME]`, holds `api_key`, `base_url` and the
plugin's own keys (`PluginProviderSettings`).

Flags arrive as `overrides`, a nested dict (`{"model": {"default": ...}}`) or dotted keys
(`{"model.default": ...}`). Lists replace lists between layers, except the safety lists
`permissions.deny` and `repo.ignore`, which add up: a project file can never drop a deny
rule the user set.

Unknown keys are reported as warnings (file, key, valid keys) and ignored; bad TOML or a
wrong type is a `ConfigError` naming the file, line, key and the type it takes. A file's
values are read as written (`network = "true"` is an error, never a boolean:
`loom.config_errors`); only the environment's text is converted. This module imports only
tomllib and pydantic so every command can afford it.

A project's file is the repository's, not the person's: its powerful keys (programs,
endpoints, environments, loosened permissions: `loom.config_keys.KEYS` declares every
key's kind) apply only in a trusted project (`loom.trust`), and it can only tighten the
sandbox. `config.trust` says which of its keys were held back and why. The project file
and `.mcp.json` are read confined to the project (a symlink leading out is not read).
"""

from __future__ import annotations

import copy
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    create_model,
    field_validator,
)

from loom import defaults
from loom.config_errors import line_of, problem_text
from loom.config_keys import drop_loosening, take_powerful
from loom.config_keys import visible as visible  # faces show project values through it
from loom.core.errors import LoomError
from loom.paths import PROJECT_CONFIG_NAME as PROJECT_CONFIG_NAME
from loom.paths import LoomPaths, walk_to_project
from loom.providers import BUILTIN, declaration

PROJECT_RULES_NAME = "LOOM.md"
RULES_MAX_BYTES = 64_000
ADDITIVE_KEYS = {("permissions", "deny"), ("repo", "ignore")}


class ConfigError(LoomError):
    """A configuration problem a person must fix; the message says where and how."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


DEFAULT_MODEL = "anthropic:claude-sonnet-4-6"


class ModelSection(_Section):
    default: str = DEFAULT_MODEL
    # None: the provider's own (its declaration's role_models); see `role_model`
    architect: str | None = None
    editor: str | None = None  # the fast model that carries out plan steps
    max_retries: int = Field(default=4, ge=0)  # transient failures (429, 5xx, network) per call
    # seconds of silence from the endpoint (nothing streamed) before the call is treated
    # as a transient failure and retried
    stall_timeout: float = Field(default=120.0, gt=0)
    # how long Anthropic keeps the prompt prefix a call caches: "5m" (writes cost 1.25x
    # input) or "1h" (2x; for sessions with long pauses). Reads cost 0.1x either way.
    cache_ttl: Literal["5m", "1h"] = "5m"
    # how hard a reasoning model thinks (loom.llm.effort); None: the family's default
    effort: Literal["minimal", "low", "medium", "high"] | None = None


class ProviderSettings(_Section):
    api_key: str | None = None
    base_url: str | None = None
    # openai and openai-compatible: which OpenAI API to speak; None: "responses" for
    # openai, "chat" (Chat Completions) for openai-compatible
    api: Literal["responses", "chat"] | None = None
    # openai-compatible only: read `<tool_call>{...}</tool_call>` blocks in the answer's
    # text as tool calls (local models served without native tool calling); opt-in
    text_tool_calls: bool = False


class PluginProviderSettings(_Section):
    """`[providers.NAME]` for a provider a plugin gives (a `loom.providers` entry point):
    `api_key` and `base_url` as for the built-in providers, and the plugin's own keys,
    which reach its factory as keyword arguments (`options`). Which keys a plugin takes
    is known only once it is imported, so its factory's parameters are checked when the
    provider is built (loom.session.assembly.providers). A project's values wait for
    trust, as the built-ins' endpoints and keys do (loom.config_keys)."""

    model_config = ConfigDict(extra="allow")
    api_key: str | None = None
    base_url: str | None = None

    @property
    def options(self) -> dict[str, Any]:
        """The plugin's own keys and their values."""
        return dict(self.model_extra or {})


class _ProvidersTables(_Section):
    # a table under [providers] that is not a built-in provider's is a plugin provider's;
    # typing `__pydantic_extra__` is how pydantic checks extras (its base declares it
    # `dict[str, Any] | None`, which a checker sees as an incompatible override)
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    __pydantic_extra__: dict[str, PluginProviderSettings] = Field(init=False)  # pyright: ignore[reportIncompatibleVariableOverride]

    def for_provider(self, name: str) -> ProviderSettings | PluginProviderSettings:
        builtin = type(self).model_fields.get(name.replace("-", "_"))
        if builtin is not None:
            return getattr(self, name.replace("-", "_"))
        return self.plugins().get(name) or PluginProviderSettings()

    def plugins(self) -> dict[str, PluginProviderSettings]:
        """The `[providers.NAME]` tables of plugin providers, by NAME."""
        return dict(self.model_extra or {})


if TYPE_CHECKING:
    ProvidersSection = _ProvidersTables
else:  # one `[providers.NAME]` table per built-in provider's declaration (loom.providers)
    ProvidersSection = create_model(
        "ProvidersSection",
        __base__=_ProvidersTables,
        **{
            decl.name.replace("-", "_"): (
                ProviderSettings,
                Field(default_factory=ProviderSettings, alias=decl.name),
            )
            for decl in BUILTIN
        },
    )


class PermissionsSection(_Section):
    auto_approve: list[str] = Field(default_factory=list)  # tool names that never ask
    deny: list[str] = Field(default_factory=list)  # rules like "shell:rm *" or "file_write:.env"


class ShellSection(_Section):
    timeout: float = Field(default=defaults.SHELL_TIMEOUT_S, gt=0)
    max_output_bytes: int = Field(default=defaults.SHELL_MAX_OUTPUT_BYTES, gt=0)
    # Secret variables (`*_API_KEY`, `*_TOKEN`, ...) are kept from agent commands unless
    # named here (names or globs like "GITHUB_*"); their values are still masked in output.
    pass_env: list[str] = Field(default_factory=list)
    # background commands (shell with background: true) running at once in one session
    max_background: int = Field(default=4, ge=0, le=64)


class ContextSection(_Section):
    reserved_output_tokens: int = Field(default=8192, gt=0)
    max_context_tokens: int | None = Field(default=None, gt=0)  # None: the model catalog's
    rules_max_tokens: int = Field(default=4000, gt=0)  # budget for LOOM.md
    compaction: bool = True  # summarise old turns with model.editor instead of dropping them
    decision_tokens: int = Field(default=1024, ge=0)  # the decision graph's zone; 0: off


class RepoSection(_Section):
    watch_enabled: bool = True
    map_tokens: int = Field(default=defaults.REPO_MAP_TOKENS, ge=0)
    ignore: list[str] = Field(default_factory=list)  # gitignore-style patterns
    max_file_bytes: int = Field(default=defaults.REPO_MAX_FILE_BYTES, gt=0)


class LspSection(_Section):
    enabled: bool = True
    servers: dict[str, list[str]] = Field(
        default_factory=lambda: {k: list(v) for k, v in defaults.LSP_SERVERS.items()}
    )


class SyncSection(_Section):
    server_url: str | None = None  # the token lives in the credentials file, never here


class UiSection(_Section):
    editing_mode: Literal["emacs", "vi"] = "emacs"
    show_tool_output: bool = True  # print a short preview of each tool result in the REPL


class CheckpointsSection(_Section):
    enabled: bool = True  # snapshot the files before every tool that can change them
    max_file_bytes: int = Field(default=1_000_000, gt=0)  # larger files are not kept
    keep_days: float = Field(default=30, gt=0)  # older checkpoints go at the next gc


class HookCommand(_Section):
    """One lifecycle hook (`[[hooks.PreToolUse]]`, ...): a shell command that gets the
    event as JSON on stdin (Claude Code's contract; see loom.hooks)."""

    command: str = Field(min_length=1)
    matcher: str | None = None  # a regex over Loom's tool names (tool events); None: all
    timeout: float = Field(default=60.0, gt=0)  # seconds; then it is killed, the step goes on

    @field_validator("matcher")
    @classmethod
    def _matcher_is_a_regex(cls, value: str | None) -> str | None:
        if value not in (None, "", "*"):
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"matcher {value!r} is not a regular expression ({exc})") from None
        return value


class HooksSection(_Section):
    # shell commands after a round of tools that changed files; {files} = those files
    # (the older, round-level form of PostToolUse: kept and read as it always was)
    post_tools: list[str] = Field(default_factory=list)
    # lifecycle hooks, Claude Code's event names (loom.hooks.EVENTS)
    PreToolUse: list[HookCommand] = Field(default_factory=list)
    PostToolUse: list[HookCommand] = Field(default_factory=list)
    UserPromptSubmit: list[HookCommand] = Field(default_factory=list)
    Stop: list[HookCommand] = Field(default_factory=list)
    SubagentStop: list[HookCommand] = Field(default_factory=list)
    SessionStart: list[HookCommand] = Field(default_factory=list)
    SessionEnd: list[HookCommand] = Field(default_factory=list)
    PreCompact: list[HookCommand] = Field(default_factory=list)
    Notification: list[HookCommand] = Field(default_factory=list)

    def commands(self, event: str) -> list[HookCommand]:
        return list(getattr(self, event, None) or [])

    def any_lifecycle(self) -> bool:
        """Is any lifecycle hook (an event's command) configured?"""
        return any(getattr(self, name) for name in type(self).model_fields if name != "post_tools")


class AgentsSection(_Section):
    """Sub-agents (the `task` tool)."""

    max_parallel: int = Field(default=4, ge=1)  # children of one session running at once
    # how deep delegation goes: 1 = the person's session may start children, children
    # may not start their own
    max_depth: int = Field(default=1, ge=0)


class GitSection(_Section):
    auto_commit: bool = False  # commit the agent's changes after each turn


class SandboxSection(_Section):
    """How agent commands (shell, git tools) are confined; see loom.sandbox.
    on: sandboxed where the OS offers it (else every shell command asks);
    ask: unconfined, every shell command asks; off: unconfined (as --no-sandbox)."""

    mode: Literal["on", "ask", "off"] = "on"
    network: bool = False  # network for sandboxed commands
    writable: list[str] = Field(default_factory=list)  # extra writable folders
    # per command, enforced for root too (loom.sandbox.limits); none: no limit
    max_processes: int | None = Field(default=defaults.SANDBOX_MAX_PROCESSES, ge=1)
    max_memory_mb: int | None = Field(default=defaults.SANDBOX_MAX_MEMORY_MB, ge=16)
    max_file_mb: int | None = Field(default=defaults.SANDBOX_MAX_FILE_MB, ge=1)


class WebFetchSection(_Section):
    """The `web_fetch` tool. `allow_hosts` loosens a protection (names, addresses or
    networks on this machine or its network that it may reach), so it counts only from
    the person's own configuration."""

    allow_hosts: list[str] = Field(default_factory=list)
    timeout: float = Field(default=20.0, gt=0)  # seconds for the whole fetch
    max_bytes: int = Field(default=5_000_000, gt=0)  # a larger page is cut here


class McpServerSettings(_Section):
    """One external MCP server: `command` (+ args, env, cwd) for stdio, or `url` (+ headers)
    for streamable HTTP. Which of the two is set is checked when the server starts, so one
    bad entry is reported on its own and never stops the rest of Loom."""

    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    enabled: bool = True
    timeout: float = Field(default=60.0, gt=0)  # seconds per tool call


class ModelSettings(_Section):
    """`[models."PROVIDER:MODEL"]`: what Loom's model catalog cannot know about a model,
    e.g. a local vision model behind openai-compatible (`images = true`)."""

    images: StrictBool | None = None  # takes image input; None: as the catalog says


class McpSection(_Section):
    servers: dict[str, McpServerSettings] = Field(default_factory=dict)
    tool_tokens: int = Field(default=8000, ge=0)  # beyond this the agent gets names + lookup
    startup_timeout: float = Field(default=30.0, gt=0)  # seconds to connect to one server
    max_result_chars: int = Field(default=100_000, gt=0)  # longer tool results are cut


class LoomConfig(_Section):
    model: ModelSection = Field(default_factory=ModelSection)
    providers: ProvidersSection = Field(default_factory=ProvidersSection)
    permissions: PermissionsSection = Field(default_factory=PermissionsSection)
    shell: ShellSection = Field(default_factory=ShellSection)
    context: ContextSection = Field(default_factory=ContextSection)
    repo: RepoSection = Field(default_factory=RepoSection)
    lsp: LspSection = Field(default_factory=LspSection)
    sync: SyncSection = Field(default_factory=SyncSection)
    ui: UiSection = Field(default_factory=UiSection)
    checkpoints: CheckpointsSection = Field(default_factory=CheckpointsSection)
    hooks: HooksSection = Field(default_factory=HooksSection)
    git: GitSection = Field(default_factory=GitSection)
    agents: AgentsSection = Field(default_factory=AgentsSection)
    sandbox: SandboxSection = Field(default_factory=SandboxSection)
    mcp: McpSection = Field(default_factory=McpSection)
    web_fetch: WebFetchSection = Field(default_factory=WebFetchSection)
    models: dict[str, ModelSettings] = Field(default_factory=dict)  # by "provider:model"

    @field_validator("models")
    @classmethod
    def _models_named_in_full(cls, value: dict[str, ModelSettings]) -> dict[str, ModelSettings]:
        for name in value:
            provider, _, model_id = name.partition(":")
            if not provider.strip() or not model_id.strip():
                raise ValueError(
                    f'[models."{name}"] names no model: write the provider and the model, '
                    'e.g. [models."openai-compatible:llava"]'
                )
        return value

    # Where this configuration came from; not configurable themselves.
    project_root: Path = Field(default_factory=Path.cwd, exclude=True)
    sources: list[Path] = Field(default_factory=list, exclude=True)
    warnings: list[str] = Field(default_factory=list, exclude=True)
    # loom.trust.ProjectTrust: the project's powerful keys and whether they apply
    # (None for a configuration built by hand: nothing of a project's was read)
    trust: Any = Field(default=None, exclude=True)


_NOT_CONFIGURABLE = {"project_root", "sources", "warnings", "trust"}


@dataclass
class _Layer:
    name: str  # a file path, "environment" or "flags"
    data: dict[str, Any]
    text: str = ""  # the TOML source, to find line numbers
    path: Path | None = None
    warnings: list[str] = field(default_factory=list)
    project: bool = False  # the repository's file: powerful keys wait for trust


# -- loading ------------------------------------------------------------------------


def default_model(config: LoomConfig | None = None, asked: str | None = None) -> str:
    """The model a session starts on: the one a face was asked for (`--model`), else
    `model.default` (else Loom's own). The one place that decides it."""
    for name in (asked, config.model.default if config is not None else None):
        if name and name.strip():
            return name.strip()
    return DEFAULT_MODEL


def role_model(role: Literal["architect", "editor"], in_use: str, configured: str | None) -> str:
    """The model for architect mode's planning (`architect`) or its steps and summaries
    (`editor`): `configured` (model.architect / model.editor) when set, else the strong or
    fast model of the provider of `in_use`, else `in_use` itself (a provider Loom knows
    no models of: openai-compatible, a local server)."""
    if configured and configured.strip():
        return configured.strip()
    provider, _, _ = in_use.partition(":")
    decl = declaration(provider)
    chosen = decl.role_models.get(role) if decl is not None else None
    return f"{decl.name}:{chosen}" if decl is not None and chosen else in_use


def load_config(
    cwd: Path | None = None,
    overrides: dict[str, Any] | None = None,
    *,
    paths: LoomPaths | None = None,
    environ: dict[str, str] | None = None,
    trust: bool | None = None,
    project_root: Path | None = None,
) -> LoomConfig:
    """Read every layer and return the effective configuration.

    `trust`: None applies the project's powerful keys only when the person trusts the
    project as it is now (the trust store says so); True applies them for this run
    (`--trust`); False never. `project_root`: the person named the project folder
    (`--project-root`), instead of finding it from `cwd`. Raises ConfigError for
    unreadable files, bad TOML and values of the wrong type.
    """
    from loom.trust import TrustStore, evaluate, interpreter_items, items_from_held, mcp_json_items

    cwd = (cwd or Path.cwd()).resolve()
    paths = paths or LoomPaths.from_env()
    env = os.environ if environ is None else environ
    project_root, project_file = find_project(cwd, project_root)

    warnings: list[str] = []
    layers: list[_Layer] = []
    if paths.user_config_file.is_file():
        layers.append(_read_toml(paths.user_config_file))
    if project_file is not None:
        project_layer = _read_project_toml(project_root, project_file, warnings)
        if project_layer is not None:
            layers.append(project_layer)
    layers.append(_Layer("environment", _from_environment(env)))
    layers.append(_Layer("flags", _expand_dotted(overrides or {})))

    trust_items, problem = mcp_json_items(project_root)
    trust_items += interpreter_items(project_root)  # what a language server would run
    warnings += [problem] if problem else []
    store = TrustStore(paths.trust_file, paths.quarantine_dir)
    merged: dict[str, Any] = {}
    project_trust = None
    for layer in layers:
        _report_unknown(layer, LoomConfig, layer.data, (), warnings)
        # typed first (a file's strictly), so what follows compares typed values, and
        # the error names the layer that holds a bad value, not the merge
        _validate(layer)
        if layer.project:
            _keep_project_sandbox_strict(layer, merged, warnings)
            untrusted = copy.deepcopy(layer.data)
            held = take_powerful(untrusted)
            trust_items += items_from_held(held, _relative(project_root, layer.path))
            project_trust = evaluate(project_root, trust_items, store, forced=trust)
            if not project_trust.applies:
                layer.data = untrusted
        _merge(merged, layer.data, ())
    if project_trust is None:  # no project file: .mcp.json alone
        project_trust = evaluate(project_root, trust_items, store, forced=trust)
    warnings += project_trust.problems
    config = _validate(_Layer("merged configuration", merged))
    config.project_root = project_root
    config.sources = [layer.path for layer in layers if layer.path is not None]
    config.warnings = warnings
    config.trust = project_trust
    return config


def find_project(cwd: Path, root: Path | None = None) -> tuple[Path, Path | None]:
    """(project root, nearest .loom.toml or None). The root is `root` when given (a
    person's `--project-root`: the walk stops there), else the git root when there is
    one, else the folder holding .loom.toml, else `cwd`."""
    if root is not None:
        root = root.resolve()
        for folder in (cwd, *cwd.parents):
            candidate = folder / PROJECT_CONFIG_NAME
            if candidate.is_file():
                return root, candidate
            if folder == root:
                break
        return root, None
    return walk_to_project(cwd)


def load_project_rules(project_root: Path, cwd: Path | None = None) -> str:
    """The project's rules for the system prompt: LOOM.md at the project root, plus a
    LOOM.md in the working directory when it differs. Empty when there are none. Read
    confined to the project: a LOOM.md that leads outside it is left out (and logged)."""
    from loom.project_files import OutsideProject, read_project_bytes

    candidates = [project_root / PROJECT_RULES_NAME]
    if cwd is not None and cwd.resolve() != project_root.resolve():
        candidates.append(cwd / PROJECT_RULES_NAME)
    parts: list[str] = []
    for path in candidates:
        try:
            raw = read_project_bytes(project_root, path, max_bytes=RULES_MAX_BYTES + 1)
        except OutsideProject as exc:
            import logging

            logging.getLogger(__name__).warning("%s", exc)
            continue
        except OSError:
            continue
        if raw is None:
            continue
        text = raw[:RULES_MAX_BYTES].decode("utf-8", errors="replace").strip()
        if len(raw) > RULES_MAX_BYTES:
            text += f"\n\n[{path.name} truncated at {RULES_MAX_BYTES} bytes]"
        if text:
            parts.append(text)
    return "\n\n".join(parts)


def valid_keys(model: type[BaseModel]) -> list[str]:
    return sorted(
        (info.alias or name)
        for name, info in model.model_fields.items()
        if name not in _NOT_CONFIGURABLE
    )


# -- layers -------------------------------------------------------------------------


def _read_toml(path: Path, text: str | None = None) -> _Layer:
    if text is None:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(
                f"{path}: cannot read the config file ({exc}); fix or remove it"
            ) from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{path}: invalid TOML: {exc}. Fix the syntax there or move the file aside."
        ) from exc
    return _Layer(str(path), data, text, path)


def _read_project_toml(root: Path, path: Path, warnings: list[str]) -> _Layer | None:
    """The project's `.loom.toml`, read confined to the project: a symlink leading out of
    it is not read (said in `warnings`), so a repository cannot make Loom read a file of
    the person's as its configuration."""
    from loom.project_files import OutsideProject, read_project_bytes

    try:
        raw = read_project_bytes(root, path)
    except OutsideProject as exc:
        warnings.append(str(exc))
        return None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config file ({exc}); fix or remove it") from exc
    if raw is None:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: cannot read the config file ({exc}); fix or remove it") from exc
    layer = _read_toml(path, text)
    layer.project = True
    return layer


def _relative(root: Path, path: Path | None) -> str:
    try:
        return str(Path(path or PROJECT_CONFIG_NAME).relative_to(root))
    except ValueError:
        return str(path)


_ENV_KEYS: dict[str, tuple[str, ...]] = {
    "LOOM_MODEL": ("model", "default"),
    "LOOM_ARCHITECT_MODEL": ("model", "architect"),
    "LOOM_EDITOR_MODEL": ("model", "editor"),
    "LOOM_MAX_RETRIES": ("model", "max_retries"),
    "LOOM_AUTO_APPROVE": ("permissions", "auto_approve"),
    "LOOM_SHELL_TIMEOUT": ("shell", "timeout"),
    "LOOM_REPO_WATCH": ("repo", "watch_enabled"),
    "LOOM_MAP_TOKENS": ("repo", "map_tokens"),
    "LOOM_SYNC_SERVER_URL": ("sync", "server_url"),
}


def _provider_variables() -> dict[str, tuple[str, ...]]:
    """providers.NAME.api_key / base_url from each provider's declaration (the first
    variable of each wins, so it is set last)."""
    found: dict[str, tuple[str, ...]] = {}
    for decl in BUILTIN:
        for key, variables in (("api_key", decl.key_vars), ("base_url", decl.base_url_vars)):
            found.update((var, ("providers", decl.name, key)) for var in reversed(variables))
    return found


_ENV_KEYS.update(_provider_variables())
ENVIRONMENT_VARIABLES = tuple(_ENV_KEYS)


def _from_environment(env: Any) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for var, key in _ENV_KEYS.items():
        value = env.get(var)
        if value is None or value == "":
            continue
        parsed: Any = value
        if key == ("permissions", "auto_approve"):
            parsed = [part.strip() for part in value.split(",") if part.strip()]
        _set(data, key, parsed)
    return data


def _keep_project_sandbox_strict(
    layer: _Layer, merged: dict[str, Any], warnings: list[str]
) -> None:
    """A project's `.loom.toml` may tighten `[sandbox]`, never loosen it: otherwise a
    command run in the sandbox could write `mode = "off"` there and escape it next time
    (and a cloned repo could unsandbox itself). Loosening keys belong in the user config
    or a flag. Which keys are tighten-only, and what "tighter" means for each, is
    declared in `loom.config_keys.KEYS`."""

    def person(path: tuple[str, ...]) -> Any:  # the person's value so far, else the default
        value: Any = merged
        for part in path:
            if not isinstance(value, dict) or part not in value:
                return _default_at(path)
            value = value[part]
        return value

    for loosened in drop_loosening(layer.data, person):
        dotted = ".".join(loosened.path)
        warnings.append(
            f"{layer.name}:{line_of(layer.text, loosened.path)}: '{dotted}' is ignored in a "
            f"project file ({loosened.hint})"
        )


def _default_at(path: tuple[str, ...]) -> Any:
    value: Any = LoomConfig().model_dump(by_alias=True)
    for part in path:
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _expand_dotted(overrides: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for key, value in overrides.items():
        if value is None:
            continue  # an unset flag overrides nothing
        if isinstance(value, dict) and "." not in key:
            _merge(data, {key: _expand_dotted(value)}, ())
        else:
            _set(data, tuple(key.split(".")), value)
    return data


def _set(data: dict[str, Any], key: tuple[str, ...], value: Any) -> None:
    for part in key[:-1]:
        data = data.setdefault(part, {})
    data[key[-1]] = value


def _merge(into: dict[str, Any], new: dict[str, Any], prefix: tuple[str, ...]) -> None:
    for key, value in new.items():
        here = (*prefix, key)
        old = into.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            _merge(old, value, here)
        elif here in ADDITIVE_KEYS and isinstance(old, list) and isinstance(value, list):
            into[key] = old + [item for item in value if item not in old]
        else:
            into[key] = value


# -- checking -----------------------------------------------------------------------


def _report_unknown(
    layer: _Layer,
    model: type[BaseModel],
    data: dict[str, Any],
    prefix: tuple[str, ...],
    warnings: list[str],
) -> None:
    fields = {(info.alias or name): info for name, info in model.model_fields.items()}
    fields.update({name: info for name, info in model.model_fields.items()})
    open_table = model.model_config.get("extra") == "allow"  # [providers]: plugins' tables
    for key in list(data):
        info = fields.get(key)
        dotted = ".".join((*prefix, key))
        if info is None and open_table:
            continue  # its model checks it (PluginProviderSettings)
        if info is None or key in _NOT_CONFIGURABLE:
            where = layer.name
            if layer.path is not None:
                where += f":{line_of(layer.text, (*prefix, key))}"
            section = f" in [{'.'.join(prefix)}]" if prefix else ""
            warnings.append(
                f"{where}: unknown config key '{dotted}' (ignored); valid keys{section}: "
                + ", ".join(valid_keys(model))
            )
            del data[key]
            continue
        sub = info.annotation
        if isinstance(sub, type) and issubclass(sub, BaseModel) and isinstance(data[key], dict):
            _report_unknown(layer, sub, data[key], (*prefix, key), warnings)


def _validate(layer: _Layer) -> LoomConfig:
    """The layer's values checked; a file's as written (strict: `"true"` is not a
    boolean, `"64"` not a number), the environment's and the flags' converted from text."""
    try:
        return LoomConfig.model_validate(layer.data, strict=layer.path is not None)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            loc = tuple(str(part) for part in error["loc"])
            where = layer.name
            if layer.path is not None:
                where += f":{line_of(layer.text, loc)}"
            problems.append(f"{where}: '{visible('.'.join(loc))}' {problem_text(error)}")
        hint = "fix the value" + (" in that file" if layer.path else f" in the {layer.name}")
        raise ConfigError("; ".join(problems) + f"; {hint}") from exc
