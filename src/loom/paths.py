"""Where Loom keeps its files (XDG on Linux; `LOOM_HOME` puts everything under one folder).

| what            | where                                   |
| threads         | data/threads/T-<uuidv7>.json            |
| local database  | data/loom.db                            |
| quarantine      | data/quarantine/                        |
| deleted threads | data/trash/ (restorable for 30 days)    |
| writer locks    | data/locks/T-<uuidv7>.lock              |
| pending sync    | state/sync/pending.json                 |
| caches          | cache/                                  |
| user config     | config/config.toml                      |
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

APP = "loom"


def _xdg(var: str, fallback: str) -> Path:
    value = os.environ.get(var)
    if value and os.path.isabs(value):
        return Path(value) / APP
    return Path.home() / fallback / APP


@dataclass(frozen=True)
class LoomPaths:
    data: Path
    state: Path
    cache: Path
    config: Path

    @classmethod
    def from_env(cls) -> LoomPaths:
        home = os.environ.get("LOOM_HOME")
        if home:
            root = Path(home).expanduser()
            return cls(root / "data", root / "state", root / "cache", root / "config")
        return cls(
            data=_xdg("XDG_DATA_HOME", ".local/share"),
            state=_xdg("XDG_STATE_HOME", ".local/state"),
            cache=_xdg("XDG_CACHE_HOME", ".cache"),
            config=_xdg("XDG_CONFIG_HOME", ".config"),
        )

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
    def user_config_file(self) -> Path:
        return self.config / "config.toml"
