"""Where Loom keeps its files (XDG on Linux; `LOOM_HOME` puts everything under one
folder), and which project a folder belongs to (`walk_to_project`).

| what            | where                                   |
| threads         | data/threads/T-<uuidv7>.json            |
| local database  | data/loom.db                            |
| quarantine      | data/quarantine/                        |
| deleted threads | data/trash/ (restorable for 30 days)    |
| writer locks    | data/locks/T-<uuidv7>.lock              |
| pending sync    | state/sync/pending.json                 |
| caches          | cache/                                  |
| user config     | config/config.toml                      |
| trusted projects| data/trust.json                         |
| private threads | data/private-threads.txt                |
"""

from __future__ import annotations

import os
from pathlib import Path

from loom._xdg import APP, roots

PROJECT_CONFIG_NAME = ".loom.toml"

__all__ = [
    "APP",
    "PROJECT_CONFIG_NAME",
    "LoomPaths",
    "folder_error",
    "folder_problem",
    "walk_to_project",
]


class LoomPaths:
    """The four roots (immutable). A plain class, not a dataclass: `loom list` imports
    this at start-up and `dataclasses` costs ~6 ms to import."""

    __slots__ = ("cache", "config", "data", "state")
    data: Path
    state: Path
    cache: Path
    config: Path

    def __init__(self, data: Path, state: Path, cache: Path, config: Path) -> None:
        for name, value in (("data", data), ("state", state), ("cache", cache), ("config", config)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"LoomPaths is immutable (tried to set {name})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LoomPaths):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        data, state, cache, config = self._key()
        return f"LoomPaths(data={data!r}, state={state!r}, cache={cache!r}, config={config!r})"

    def _key(self) -> tuple[Path, Path, Path, Path]:
        return (self.data, self.state, self.cache, self.config)

    @classmethod
    def from_env(cls) -> LoomPaths:
        data, state, cache, config = roots()
        return cls(Path(data), Path(state), Path(cache), Path(config))

    @property
    def threads_dir(self) -> Path:
        return self.data / "threads"

    @property
    def quarantine_dir(self) -> Path:
        return self.data / "quarantine"

    @property
    def trash_dir(self) -> Path:
        return self.data / "trash"

    @property
    def locks_dir(self) -> Path:
        return self.data / "locks"

    @property
    def database(self) -> Path:
        return self.data / "loom.db"

    @property
    def pending_sync_file(self) -> Path:
        return self.state / "sync" / "pending.json"

    @property
    def trust_file(self) -> Path:
        """Which projects the person trusts (loom.trust); in the data folder, which
        sandboxed commands cannot write."""
        return self.data / "trust.json"

    @property
    def private_threads_file(self) -> Path:
        """Loom's own record of which threads are private (loom.store.private_record);
        in the data folder, which sandboxed commands cannot write."""
        return self.data / "private-threads.txt"

    @property
    def user_config_file(self) -> Path:
        return self.config / "config.toml"


# -- whether the folders can be used -------------------------------------------------
# Every command writes under the data, state and cache folders. When one of them cannot
# be made or written (a read-only disk or folder, a path that runs through a file), the
# command stops with one line: which folder, why, and which variable points Loom
# elsewhere, instead of a traceback from wherever it first wrote.

_XDG_VARS = ("XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")
_KINDS = ("data", "state", "cache")


def what_to_set(index: int) -> str:
    if os.environ.get("LOOM_HOME"):
        return "set LOOM_HOME to a folder you can write"
    return f"set {_XDG_VARS[index]} (or LOOM_HOME) to a folder you can write"


def folder_problem(*, writing: bool = True) -> str | None:
    """One line about the first unusable folder among data, state and cache, or None;
    `writing=False`: a read-only folder is usable (a command that only reads)."""
    for index, folder in enumerate(roots()[:3]):
        why = _why_unusable(folder, writing)
        if why:
            return f"Loom's {_KINDS[index]} folder {folder} cannot be used ({why}); " + (
                what_to_set(index)
            )
    return None


def _why_unusable(folder: str, writing: bool) -> str | None:
    path = os.path.abspath(folder)
    while not os.path.lexists(path):  # the nearest part that exists
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent
    if not os.path.isdir(path):
        return f"{path} is a file, not a folder"
    if writing and not os.access(path, os.W_OK | os.X_OK):
        return "it is read-only" if path == os.path.abspath(folder) else f"{path} is read-only"
    return None


def folder_error(exc: OSError) -> str | None:
    """One line for an error writing under one of Loom's folders, or None when the
    error is about some other file."""
    name = exc.filename if isinstance(exc.filename, str) else None
    if not name:
        return None
    path = os.path.abspath(name)
    for index, folder in enumerate(roots()[:3]):
        root = os.path.abspath(folder)
        if path == root or path.startswith(root + os.sep):
            reason = exc.strerror or type(exc).__name__
            return f"Loom's {_KINDS[index]} folder {folder} cannot be used ({reason}: {name}); " + (
                what_to_set(index)
            )
    return None


def walk_to_project(cwd: Path) -> tuple[Path, Path | None]:
    """(project root, nearest .loom.toml or None): the git root when there is one, else
    the folder holding .loom.toml, else `cwd`."""
    config_file: Path | None = None
    for folder in (cwd, *cwd.parents):
        candidate = folder / PROJECT_CONFIG_NAME
        if config_file is None and candidate.is_file():
            config_file = candidate
        if (folder / ".git").exists():
            return folder, config_file
    if config_file is not None:
        return config_file.parent, config_file
    return cwd, None
