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
| trusted projects| data/trust.json                         |
"""

from __future__ import annotations

from pathlib import Path

from loom._xdg import APP, roots

__all__ = ["APP", "LoomPaths"]


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
    def user_config_file(self) -> Path:
        return self.config / "config.toml"
