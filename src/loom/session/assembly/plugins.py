"""Extension points: Python entry points in named groups, loaded lazily (seed 000).

- `loom.tools`: `provide(setup: ToolSetup) -> Iterable[Tool]`, called for every new
  session (Workspace.start_session) and by `loom plugins`.
- `loom.providers`: `factory(api_key=..., base_url=..., timeout=..., **options) ->
  Provider`; its entry-point name is the provider part of model names (`name:model-id`)
  and of its settings table, `[providers.NAME]`: `api_key`, `base_url` and the plugin's
  own keys, each of which must be a keyword parameter of the factory (or it takes
  `**kwargs`); an unknown key stops the session start with the list it takes.
- `loom.extractors` (repo-intel languages, read by loom.repointel.extractors) and
  `loom.node_types` (decision-graph node types, read by loom.decisions.types):
  discovered and checked here by `loom plugins`.

Loom's own tool families (the built-ins, `repointel`, `lsp`) register through the same
hook as a plugin does, listed in BUILTIN_TOOL_PROVIDERS. A plugin that fails to load, or
whose provider raises or returns something that is not a tool, is reported (logged, and
shown by `loom plugins`) and skipped: never fatal.

    pyproject.toml of a plugin:
    [project.entry-points."loom.tools"]
    shout = "loom_shout:provide"
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from loom.tools.base import Tool, ToolSetup

log = logging.getLogger(__name__)

PLUGIN_GROUPS = ("loom.tools", "loom.providers", "loom.extractors", "loom.node_types")
BUILTIN_TOOL_PROVIDERS: dict[str, str] = {
    "builtin": "loom.tools.defaults:provide",
    "repointel": "loom.repointel.tools:provide",
    "lsp": "loom.lsp.tools:provide",
    "decisions": "loom.decisions.tools:provide",
    "delegation": "loom.delegation.tools:provide",  # task (sub-agents), skill
}


@dataclass
class Plugin:
    group: str
    name: str
    target: str  # "module:attribute"
    source: str  # "loom" for the built-ins, else the distribution that declares it
    error: str | None = None  # why it was skipped
    tools: list[str] = field(default_factory=list)  # what it gave: tool names, a language

    @property
    def ok(self) -> bool:
        return self.error is None


def discover(group: str) -> list[Plugin]:
    """The entry points of `group` (the built-ins first for `loom.tools`), not loaded."""
    from loom._entry_points import entry_points

    found = []
    if group == "loom.tools":
        found = [Plugin(group, n, t, "loom") for n, t in BUILTIN_TOOL_PROVIDERS.items()]
    for point in entry_points(group=group):
        dist = getattr(point, "dist", None)
        source = f"{dist.name} {dist.version}" if dist is not None else "?"
        found.append(Plugin(group, point.name, point.value, source))
    return found


def load(plugin: Plugin, *, want_callable: bool = True) -> Any:
    """Import the plugin's target; None (and `plugin.error` set) when that fails."""
    from importlib import import_module

    module_name, _, attribute = plugin.target.partition(":")
    try:
        target: Any = import_module(module_name.strip())
        for part in filter(None, attribute.strip().split(".")):
            target = getattr(target, part)
    except Exception as exc:  # a broken plugin must never stop Loom
        _skip(plugin, f"cannot load {plugin.target}: {type(exc).__name__}: {exc}")
        return None
    if want_callable and not callable(target):
        _skip(plugin, f"{plugin.target} is not callable")
        return None
    return target


def session_tools(setup: ToolSetup, plugins: list[Plugin] | None = None) -> list[Tool]:
    """Every tool the `loom.tools` providers give this session, in order; a provider
    that fails, returns a non-tool or a name already taken is reported and skipped."""
    from loom.tools.base import Tool

    tools: list[Tool] = []
    taken: set[str] = set()
    for plugin in discover("loom.tools") if plugins is None else plugins:
        provide = load(plugin)
        if provide is None:
            continue
        try:
            given = list(provide(setup))
        except Exception as exc:
            _skip(plugin, f"its provider failed: {type(exc).__name__}: {exc}")
            continue
        bad = [t for t in given if not isinstance(t, Tool)]
        clash = sorted(t.name for t in given if isinstance(t, Tool) and t.name in taken)
        if bad:
            _skip(plugin, f"it returned {type(bad[0]).__name__}, not a Tool")
        elif clash:
            _skip(plugin, f"tool name {clash[0]!r} is already taken")
        else:
            plugin.tools = [t.name for t in given]
            taken.update(plugin.tools)
            tools.extend(given)
    return tools


def provider_plugin(name: str) -> Callable[..., Any] | None:
    """The `loom.providers` factory named `name`, or None when no plugin has that name."""
    for plugin in discover("loom.providers"):
        if plugin.name == name:
            return load(plugin)
    return None


def _skip(plugin: Plugin, why: str) -> None:
    plugin.error = why
    log.warning(
        "plugin %s (%s, from %s) skipped: %s", plugin.name, plugin.group, plugin.source, why
    )


def survey(setup: ToolSetup) -> list[Plugin]:
    """Every plugin of every group, loaded and checked (`loom plugins`): tool providers
    are called with `setup` (the caller runs its cleanups), the others imported."""
    found: list[Plugin] = []
    tools = discover("loom.tools")
    session_tools(setup, tools)
    found.extend(tools)
    for group in PLUGIN_GROUPS[1:]:
        for plugin in discover(group):
            value = load(plugin, want_callable=group == "loom.providers")
            if group == "loom.node_types" and value is not None:
                _check_node_type(plugin, value)
            if group == "loom.extractors" and value is not None:
                _check_extractor(plugin, value)
            found.append(plugin)
    return found


def _check_extractor(plugin: Plugin, value: Any) -> None:
    """As loom.repointel reads it: language, extensions, extract(data)."""
    from loom.repointel.extractors import check

    try:
        extractor = check(plugin.name, value)
    except TypeError as exc:
        _skip(plugin, str(exc))
    else:
        plugin.tools = [f"{extractor.language} ({', '.join(extractor.extensions)})"]


def _check_node_type(plugin: Plugin, value: Any) -> None:
    """As loom.decisions reads it: a string, or a function that returns one."""
    try:
        description = value() if callable(value) else value
    except Exception as exc:
        description = exc
    if not isinstance(description, str):
        _skip(plugin, "a node type names a string, its one-line description")
