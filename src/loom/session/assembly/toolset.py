"""The tools a session gets: every `loom.tools` provider (built-ins, repointel, lsp,
then plugins) called with the session's ToolSetup, then the face's extra tools."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from loom.session.assembly.plugins import BUILTIN_TOOL_PROVIDERS, Plugin, discover, session_tools
from loom.tools.base import Tool, ToolRegistry, ToolSetup


def session_toolset(
    setup: ToolSetup, extra: Sequence[Tool] = (), *, plugins: bool = True
) -> ToolRegistry:
    """The registry for one session; `plugins=False`: Loom's own families only."""
    chosen = discover("loom.tools") if plugins else _builtin_plugins()
    registry = ToolRegistry(session_tools(setup, chosen))
    for tool in extra:
        registry.register(tool)
    return registry


def default_registry(project_root: Path, config: Any = None, launcher: Any = None) -> ToolRegistry:
    """Loom's own tools for a project, outside any session (tests, benches): the
    built-ins, repo_map/symbol_search and the lsp_* tools, with `config` (a LoomConfig;
    None: the defaults) and `launcher` (a sandbox for shell and git; None: none). Nothing
    here runs the setup's cleanups (a language server an lsp tool starts lives until the
    process ends); sessions run them when they stop."""
    if config is None:
        from loom.config import LoomConfig

        config = LoomConfig(project_root=Path(project_root))
    from loom.paths import LoomPaths

    setup = ToolSetup(Path(project_root).resolve(), config, LoomPaths.from_env())
    setup.command_launcher = launcher
    return session_toolset(setup, plugins=False)


def _builtin_plugins() -> list[Plugin]:
    return [Plugin("loom.tools", n, t, "loom") for n, t in BUILTIN_TOOL_PROVIDERS.items()]
