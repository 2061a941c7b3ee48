"""Loom's built-in tools: files, search, listing, shell and git.

They reach a session through the tool extension hook like any plugin (`provide`, listed
first in loom.session.assembly.plugins); `repo_map`/`symbol_search` come from loom.repointel and
the `lsp_*` tools from loom.lsp the same way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from loom.tools._launcher import CommandLauncher
from loom.tools.background import DEFAULT_LIMIT, BackgroundCommands
from loom.tools.background_tools import ShellKill, ShellOutput
from loom.tools.base import Tool, ToolRegistry, ToolSetup
from loom.tools.builtin import BuiltinTool
from loom.tools.content_search import ContentSearch
from loom.tools.file_read import FileRead
from loom.tools.file_write import FileEdit, FileWrite
from loom.tools.git import Git
from loom.tools.listing import DirectoryList, FileSearch
from loom.tools.shell import DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_TIMEOUT_S, Shell
from loom.tools.todo import TodoWrite
from loom.tools.web_fetch import WebFetch


def builtin_tools(
    project_root: Path,
    config: Any = None,
    launcher: CommandLauncher | None = None,
    *,
    with_background: bool = False,
    on_close: Callable[[Callable[[], Awaitable[None] | None]], None] | None = None,
) -> list[Tool]:
    """file_read, file_write, file_edit, file_search, content_search, directory_list,
    shell, git, todo_write and web_fetch, set up from `config` (a LoomConfig, or None for
    the defaults): `shell.timeout`, `shell.max_output_bytes`, `shell.pass_env`,
    `repo.ignore`, `[web_fetch]`.
    `launcher` (the session's sandbox) wraps the commands shell runs (git runs outside
    it, hardened: see loom.tools.git). `with_background` (a session's set): shell may
    start background commands, read and ended with shell_output and shell_kill, all of
    them ended through `on_close` when the session stops."""
    root = Path(project_root).resolve()
    ignores = tuple(config.repo.ignore) if config is not None else ()
    timeout = float(config.shell.timeout) if config is not None else DEFAULT_TIMEOUT_S
    max_output = (
        int(config.shell.max_output_bytes) if config is not None else DEFAULT_MAX_OUTPUT_BYTES
    )
    pass_env = tuple(config.shell.pass_env) if config is not None else ()
    limit = int(config.shell.max_background) if config is not None else DEFAULT_LIMIT
    background = BackgroundCommands(limit=limit) if with_background else None
    extra: list[Tool] = []
    if background is not None:
        extra = [ShellOutput(root, background), ShellKill(root, background)]
        if on_close is not None:
            on_close(background.close)  # every background command ends with its session
    return [
        FileRead(root),
        FileWrite(root),
        FileEdit(root),
        FileSearch(root, ignores),
        ContentSearch(root, ignores),
        DirectoryList(root, ignores),
        Shell(
            root,
            timeout=timeout,
            max_timeout=max(600.0, timeout),
            max_output_bytes=max_output,
            pass_env=pass_env,
            launcher=launcher,
            background=background,
        ),
        *extra,
        Git(root, max_output_bytes=max_output, pass_env=pass_env),
        TodoWrite(root),
        _web_fetch(root, config),
    ]


def _web_fetch(root: Path, config: Any) -> WebFetch:
    if config is None:
        return WebFetch(root)
    settings = config.web_fetch
    return WebFetch(
        root,
        allow_hosts=tuple(settings.allow_hosts),
        timeout=float(settings.timeout),
        max_bytes=int(settings.max_bytes),
    )


def provide(setup: ToolSetup) -> list[Tool]:
    return builtin_tools(
        setup.project_root,
        setup.config,
        setup.command_launcher,
        with_background=True,
        on_close=setup.on_close,
    )


def builtin_registry(project_root: Path, config: Any = None) -> ToolRegistry:
    """A registry of the built-in tools only, for code below the session (tests of the
    tools, MCP). A session's full set (with repo_map, symbol_search, lsp_* and plugins)
    comes from loom.session.assembly.toolset, which this layer must not import."""
    return ToolRegistry(builtin_tools(project_root, config))


def builtin_tool_types() -> dict[str, type[BuiltinTool]]:
    """The built-in tools by name (how an old thread's calls are shown)."""
    kinds: list[type[BuiltinTool]] = [
        FileRead, FileWrite, FileEdit, FileSearch, ContentSearch, DirectoryList,
        Shell, ShellOutput, ShellKill, Git, TodoWrite, WebFetch,
    ]  # fmt: skip
    return {kind.name: kind for kind in kinds}
