"""Every configuration key, and what a *project's* file may do with it (design principle 8).

A repository's `.loom.toml` is written by whoever wrote the repository. Each key is one of

- `SHAPES`: only shapes behaviour (which of the person's models, budgets, ignore and
  deny rules, UI). A project's value applies always.
- `Powerful(...)`: chooses a program, an endpoint, an environment, or loosens a
  permission. A project's value applies only once the person trusts the project
  (`loom.trust`); until then it is held aside, named, and shown in the trust question
  by its `show` function.
- `Tighten(...)`: a project may make it stricter than the person's own value, never
  looser (the sandbox, the sub-agent limits, checkpoints for undo), trusted or not; a
  looser value is ignored with a warning. The values compared are typed already: a
  file's value of the wrong type is an error before this check (loom.config).

Adding a key to `loom.config`? Declare it in `KEYS` below (tests/test_config_keys.py
walks the config model and fails on a key that is not declared). Patterns are dotted;
`*` stands for one name (`providers.*.base_url`); a key declared for a table covers
what is inside it (`lsp.servers` covers `lsp.servers.go`; `hooks.*` every hook).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from loom.core.secrets import hide_url_passwords, is_secret_name, is_secret_variable
from loom.core.text import visible as visible  # the one sanitizer: values in questions

Show = Callable[[str, Any], list[str]]  # (dotted key, value) -> lines for a person


@dataclass(frozen=True)
class Shapes:
    """Applies from any layer."""


@dataclass(frozen=True)
class Powerful:
    """Applies from a project file only when the project is trusted. `show` spells out
    what the value would do (programs and arguments, URLs, env names with secrets
    masked, permissions)."""

    show: Show


@dataclass(frozen=True)
class Tighten:
    """A project's value applies only when `stricter(project, person)` says it is at
    least as strict as the person's (their file, else the default); `hint` ends the
    warning about a looser one."""

    stricter: Callable[[Any, Any], bool]
    hint: str


SHAPES = Shapes()
Kind = Shapes | Powerful | Tighten


# -- how powerful values are shown ---------------------------------------------------

HIDDEN = "<hidden>"
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}")


def masked(name: str, value: Any, *, always: bool = False) -> str:
    """A value for display: `${VAR}` references are named (their values stay in your
    environment), a secret-named value is hidden whole, a password in a URL alone."""
    text = value if isinstance(value, str) else json.dumps(value)
    refs = _VAR.findall(text)
    if not always and not is_secret_name(name) and is_secret_variable(name, text):
        # a password in a URL: only it is hidden, so a value cannot hide itself whole
        # (`PYTHONPATH = "a://u:p@h:."` must show that it puts the project on the path)
        text = hide_url_passwords(text, HIDDEN)
    elif always or is_secret_variable(name, text):
        if refs and _VAR.fullmatch(text):
            return f"{text} (your environment variable {refs[0]})"
        if refs:
            return f"{HIDDEN} (includes your environment variable{'s' if len(refs) > 1 else ''} " \
                   f"{', '.join(refs)})"  # fmt: skip
        return HIDDEN if text else '""'
    if refs:
        return f"{text} (from your environment: {', '.join(refs)})"
    return text


def show_value(key: str, value: Any) -> list[str]:
    if isinstance(value, str) and is_secret_name(key.rsplit(".", 1)[-1]):
        return [f"{key} = {HIDDEN}"]
    return [f"{key} = {json.dumps(value)}"]


def show_program(key: str, value: Any) -> list[str]:
    argv = value if isinstance(value, list) else [value]
    return [f"{key}: runs `{shlex.join(str(part) for part in argv)}`"]


def show_commands(key: str, value: Any) -> list[str]:
    commands = value if isinstance(value, list) else [value]
    lines = [f"{key}: runs these commands by itself:"]
    for command in commands:
        if isinstance(command, dict) and "command" in command:  # [[hooks.EVENT]] tables
            matcher = command.get("matcher")
            text = str(command["command"]) + (f"   (tools matching {matcher})" if matcher else "")
        else:
            text = command if isinstance(command, str) else json.dumps(command)
        lines.append(f"    {text}")
    return lines


def show_mcp_server(key: str, value: Any) -> list[str]:
    """An MCP server entry (`[mcp.servers.NAME]` or `.mcp.json`): everything it runs."""
    if not isinstance(value, dict):
        return show_value(key, value)
    return [f"{key}: MCP server", *(f"    {line}" for line in mcp_server_lines(value))]


def mcp_server_lines(entry: dict[str, Any]) -> list[str]:
    """command + args, cwd, env (values masked when secret-like), url, headers (values
    masked; `${VAR}` named): what approving this server lets it do."""
    lines: list[str] = []
    if entry.get("url"):
        lines.append(f"url: {entry['url']}")
    if entry.get("command"):
        argv = [str(entry["command"]), *(str(arg) for arg in entry.get("args") or [])]
        lines.append(f"runs: {shlex.join(argv)}")
    if entry.get("cwd"):
        lines.append(f"in folder: {entry['cwd']}")
    env = entry.get("env") or {}
    pairs = env.items() if isinstance(env, dict) else ((p.get("name"), p.get("value")) for p in env)
    for name, value in pairs:
        lines.append(f"env {name}={masked(str(name), value)}")
    headers = entry.get("headers") or {}
    for name, value in headers.items() if isinstance(headers, dict) else ():
        lines.append(f"header {name}: {masked(str(name), value, always=True)}")
    if not lines:
        lines.append(f"(neither command nor url: {json.dumps(entry)})")
    return [visible(line) for line in lines]


def show_endpoint(what: str) -> Show:
    def show(key: str, value: Any) -> list[str]:
        return [f"{key} = {json.dumps(value)}: {what} {value}"]

    return show


def show_secret(key: str, value: Any) -> list[str]:
    return [f"{key} = {HIDDEN}: a key the project chose"]


def show_list(what: str) -> Show:
    """`key: <what>: a, b, c` for a list of names (tools, variables, hosts)."""

    def show(key: str, value: Any) -> list[str]:
        names = value if isinstance(value, list) else [value]
        return [f"{key}: {what}: {', '.join(map(str, names)) or '(none)'}"]

    return show


def show_plugin_setting(key: str, value: Any) -> list[str]:
    """A provider plugin's own key: Loom cannot know what it does, so it is shown whole
    (secret-looking values hidden) and named as the plugin's."""
    name = key.split(".")[1] if key.count(".") >= 2 else key
    shown = masked(key.rsplit(".", 1)[-1], value)
    return [f"{key} = {shown}: a setting the provider plugin {name!r} reads"]


def show_auto_commit(key: str, value: Any) -> list[str]:
    if value is True:
        return [f"{key} = true: commits the agent's changes after each turn, unasked"]
    return show_value(key, value)


# -- tighten-only rules (the sandbox, the sub-agent limits) ------------------------------

# The layers are typed before these rules run (a file's values strictly: loom.config), so
# each compares typed values; anything else is never "stricter" (fails closed).
_NO_LOOSENING = (
    "a project cannot loosen its own sandbox; set it in your user config or pass --no-sandbox"
)
# a cloned repository must not let a (prompt-injected) model fan out into a deep,
# wide tree of sub-agents on the person's key
_AGENT_LIMIT = (
    "a project may lower the sub-agent limits, not raise them; raise them in your user config"
)
_UNDO = (
    "undo is your safety net: a project may turn checkpoints on, not off; "
    "turn them off in your user config"
)
_MODE_STRICTNESS = {"off": 0, "ask": 1, "on": 2}


def _stricter_mode(project: Any, person: Any) -> bool:
    if not isinstance(project, str) or project not in _MODE_STRICTNESS:
        return False
    return _MODE_STRICTNESS[project] >= _MODE_STRICTNESS.get(person, 2)


def _stricter_flag_off(project: Any, person: Any) -> bool:
    """For switches where off is stricter (`sandbox.network`)."""
    return isinstance(project, bool) and (project is False or person is True)


def _stricter_flag_on(project: Any, person: Any) -> bool:
    """For switches where on is stricter (`checkpoints.enabled`: a safety net)."""
    return isinstance(project, bool) and (project is True or person is False)


def _subset(project: Any, person: Any) -> bool:
    if not isinstance(project, list) or not all(isinstance(item, str) for item in project):
        return False
    return set(project) <= set(map(str, person or []))


def at_most(project: Any, person: Any) -> bool:
    """For limits where smaller is stricter (None: no limit): the rule for a new
    `[sandbox]` limit such as `max_processes`."""
    if project is None:
        return person is None
    if isinstance(project, bool) or not isinstance(project, int | float):
        return False
    return person is None or project <= person


# -- the table -------------------------------------------------------------------------

KEYS: dict[str, Kind] = {
    "model.default": SHAPES,  # among the person's providers: keys and URLs are theirs
    "model.architect": SHAPES,
    "model.editor": SHAPES,
    "model.max_retries": SHAPES,
    "model.stall_timeout": SHAPES,
    "providers.*.api_key": Powerful(show_secret),
    "providers.*.base_url": Powerful(show_endpoint("your API key for it is sent to")),
    "providers.*.text_tool_calls": SHAPES,  # how tool calls are read from the model's text
    # a provider plugin's own keys (`[providers.NAME]`, passed to its factory): what they
    # do is the plugin's, so a project's wait for trust like the built-ins' endpoints
    "providers.*.*": Powerful(show_plugin_setting),
    "permissions.auto_approve": Powerful(show_list("these tools run without asking")),
    "permissions.deny": SHAPES,  # adds up across layers: a project can only deny more
    "shell.timeout": SHAPES,
    "shell.max_output_bytes": SHAPES,
    "shell.pass_env": Powerful(
        show_list("agent commands and MCP servers may see these secret variables")
    ),
    "context.reserved_output_tokens": SHAPES,
    "context.max_context_tokens": SHAPES,
    "context.rules_max_tokens": SHAPES,
    "context.compaction": SHAPES,
    "context.decision_tokens": SHAPES,
    "repo.watch_enabled": SHAPES,
    "repo.map_tokens": SHAPES,
    "repo.ignore": SHAPES,
    "repo.max_file_bytes": SHAPES,
    "lsp.enabled": SHAPES,
    "lsp.servers": Powerful(show_program),
    "sync.server_url": Powerful(show_endpoint("your threads and sync token are sent to")),
    "ui.editing_mode": SHAPES,
    "ui.show_tool_output": SHAPES,
    "checkpoints.enabled": Tighten(_stricter_flag_on, _UNDO),
    "checkpoints.max_file_bytes": SHAPES,
    "checkpoints.keep_days": SHAPES,
    "hooks.*": Powerful(show_commands),
    "git.auto_commit": Powerful(show_auto_commit),
    "sandbox.mode": Tighten(_stricter_mode, _NO_LOOSENING),
    "sandbox.network": Tighten(_stricter_flag_off, _NO_LOOSENING),
    "sandbox.writable": Tighten(_subset, _NO_LOOSENING),
    "sandbox.max_processes": Tighten(at_most, _NO_LOOSENING),
    "sandbox.max_memory_mb": Tighten(at_most, _NO_LOOSENING),
    "sandbox.max_file_mb": Tighten(at_most, _NO_LOOSENING),
    "web_fetch.allow_hosts": Powerful(
        show_list("web_fetch may reach these hosts on this machine or its network")
    ),
    "web_fetch.timeout": SHAPES,
    "models": SHAPES,  # [models."provider:model"] images: what the catalog cannot know
    "web_fetch.max_bytes": SHAPES,
    "mcp.servers": Powerful(show_mcp_server),
    "agents.max_parallel": Tighten(at_most, _AGENT_LIMIT),
    "agents.max_depth": Tighten(at_most, _AGENT_LIMIT),
    "mcp.tool_tokens": SHAPES,
    "mcp.startup_timeout": SHAPES,
    "mcp.max_result_chars": SHAPES,
}
# A project's `.mcp.json` is powerful as a whole: each server is one item, shown so.
MCP_JSON_KIND = Powerful(show_mcp_server)


def _match(pattern: str, path: tuple[str, ...]) -> bool:
    parts = pattern.split(".")
    return len(parts) == len(path) and all(p in ("*", q) for p, q in zip(parts, path, strict=True))


def declared(path: tuple[str, ...]) -> tuple[str, Kind] | None:
    """The declaration covering `path` (the key itself or a table holding it); of two
    patterns that match, the one naming more parts (`providers.*.api_key` before
    `providers.*.*`)."""
    for depth in range(len(path), 0, -1):
        matches = [(p, kind) for p, kind in KEYS.items() if _match(p, path[:depth])]
        if matches:
            return min(matches, key=lambda found: found[0].count("*"))
    return None


def kind_of(dotted: str) -> Kind | None:
    found = declared(tuple(dotted.split(".")))
    return found[1] if found else None


@dataclass(frozen=True)
class Held:
    """A powerful key a project file sets: applied only when the project is trusted."""

    key: str  # dotted; a table of programs or servers gives one per entry
    value: Any
    kind: Powerful


@dataclass(frozen=True)
class Loosening:
    """A tighten-only key a project file tried to loosen (ignored)."""

    path: tuple[str, ...]
    hint: str


def drop_loosening(
    data: dict[str, Any], person: Callable[[tuple[str, ...]], Any]
) -> list[Loosening]:
    """Take out of a project file's (checked) data, in place, every tighten-only key
    that would loosen the person's value (`person(path)`: theirs so far, else the
    default). Trusted or not, a project never loosens these."""
    loosened: list[Loosening] = []

    def visit(path: tuple[str, ...], kind: Kind, value: Any, container: dict[str, Any]) -> None:
        if isinstance(kind, Tighten) and not kind.stricter(value, person(path)):
            loosened.append(Loosening(path, kind.hint))
            del container[path[-1]]

    _walk(data, (), visit)
    return loosened


def take_powerful(data: dict[str, Any]) -> list[Held]:
    """Take every powerful key out of a project file's (checked) data, in place: one
    `Held` each (one per entry for a table of programs or servers)."""
    held: list[Held] = []

    def visit(path: tuple[str, ...], kind: Kind, value: Any, container: dict[str, Any]) -> None:
        if not isinstance(kind, Powerful):
            return
        dotted = ".".join(path)
        if isinstance(value, dict) and value:
            held.extend(Held(f"{dotted}.{name}", entry, kind) for name, entry in value.items())
        else:
            held.append(Held(dotted, value, kind))
        del container[path[-1]]

    _walk(data, (), visit)
    return held


def _walk(
    data: dict[str, Any],
    prefix: tuple[str, ...],
    visit: Callable[[tuple[str, ...], Kind, Any, dict[str, Any]], None],
) -> None:
    """Call `visit` for each declared key in `data` (tables above them walked into)."""
    for key in list(data):
        path = (*prefix, key)
        value = data[key]
        found = declared(path)
        if found is not None and len(found[0].split(".")) == len(path):
            visit(path, found[1], value, data)
        elif isinstance(value, dict):
            _walk(value, path, visit)
