"""The built-in tools every session gets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loom.lsp.tools import lsp_tools
from loom.repointel.tools import repointel_tools
from loom.tools._launcher import CommandLauncher
from loom.tools.base import ToolRegistry
from loom.tools.content_search import ContentSearch
from loom.tools.file_read import FileRead
from loom.tools.file_write import FileEdit, FileWrite
from loom.tools.git import Git
from loom.tools.listing import DirectoryList, FileSearch
from loom.tools.shell import DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_TIMEOUT_S, Shell


def _setting(config: Any, section: str, key: str, default: Any) -> Any:
    value = getattr(getattr(config, section, None), key, None)
    return default if value is None else value


def default_registry(
    project_root: Path, config: Any = None, launcher: CommandLauncher | None = None
) -> ToolRegistry:
    """file_read, file_write, file_edit, file_search, content_search, directory_list,
    shell, git, repo_map, symbol_search and the lsp_* tools, set up from `config` (a
    LoomConfig, or None for defaults):
    `shell.timeout`, `shell.max_output_bytes`, `repo.ignore`. `launcher` (the session's
    sandbox) wraps the commands shell and git run."""
    root = Path(project_root).resolve()
    ignores = tuple(_setting(config, "repo", "ignore", ()))
    timeout = float(_setting(config, "shell", "timeout", DEFAULT_TIMEOUT_S))
    max_output = int(_setting(config, "shell", "max_output_bytes", DEFAULT_MAX_OUTPUT_BYTES))
    return ToolRegistry(
        [
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
                launcher=launcher,
            ),
            Git(root, max_output_bytes=max_output, launcher=launcher),
            *repointel_tools(root, config),
            *lsp_tools(root, config),
        ]
    )
