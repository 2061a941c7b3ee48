"""Repo intelligence: file index, tree-sitter symbols, the ranked repo map, the watcher.

Public entry points (heavy modules load on first use):
- `repo_map_for(project_root, focus_files, mentioned_identifiers, token_budget) -> str`
- `start_watcher(project_root, on_change, loop=None) -> RepoWatcher` (`.stop()` to end)
- `RepoIntel.for_root(root)`: the shared per-project service.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from loom.repointel.service import RepoIntel
    from loom.repointel.settings import RepoSettings
    from loom.repointel.watcher import OnChange, RepoWatcher

__all__ = ["RepoIntel", "repo_map_for", "start_watcher"]


def repo_map_for(
    project_root: Path | str,
    focus_files: Iterable[str] = (),
    mentioned_identifiers: Iterable[str] = (),
    token_budget: int | None = None,
    settings: RepoSettings | None = None,
) -> str:
    """The ranked map of a project fitted to `token_budget` tokens (config default if None).

    Never raises for a broken repository: returns "" and the caller carries on without.
    """
    from loom.repointel.service import RepoIntel

    try:
        return RepoIntel.for_root(project_root, settings).repo_map(
            token_budget, focus_files, mentioned_identifiers
        )
    except OSError:
        return ""


def start_watcher(
    project_root: Path | str, on_change: OnChange | None = None, **kwargs: Any
) -> RepoWatcher:
    """Watch a project (see loom.repointel.watcher); `settings=` for its [repo] settings."""
    from loom.repointel.watcher import start_watcher as _start

    return _start(project_root, on_change, **kwargs)


def __getattr__(name: str) -> Any:
    if name == "RepoIntel":
        from loom.repointel.service import RepoIntel

        return RepoIntel
    raise AttributeError(name)
