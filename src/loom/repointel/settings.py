"""The [repo] settings this part reads, from loom.config when it is there.

Keys: repo.watch_enabled (default true), repo.map_tokens (1024), repo.ignore (extra
gitignore-style patterns), repo.max_file_bytes (1,000,000).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loom.repointel.ignore import DEFAULT_IGNORES
from loom.repointel.scan import DEFAULT_MAX_FILE_BYTES


@dataclass(frozen=True)
class RepoSettings:
    watch_enabled: bool = True
    map_tokens: int = 1024
    ignore: tuple[str, ...] = field(default=DEFAULT_IGNORES)
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES

    @classmethod
    def from_section(cls, section: Any) -> RepoSettings:
        """From loom.config's typed [repo] section (RepoSection)."""
        return cls(
            watch_enabled=section.watch_enabled,
            map_tokens=section.map_tokens,
            ignore=DEFAULT_IGNORES + tuple(section.ignore),
            max_file_bytes=section.max_file_bytes,
        )

    @classmethod
    def from_mapping(cls, section: dict[str, Any] | None) -> RepoSettings:
        section = section or {}
        extra = tuple(str(p) for p in section.get("ignore", ()) or ())
        return cls(
            watch_enabled=bool(section.get("watch_enabled", True)),
            map_tokens=int(section.get("map_tokens", 1024)),
            ignore=DEFAULT_IGNORES + extra,
            max_file_bytes=int(section.get("max_file_bytes", DEFAULT_MAX_FILE_BYTES)),
        )


def config_section(project_root: Path, name: str, config: Any = None) -> dict[str, Any]:
    """One section of the layered config as a plain dict ({} when there is none)."""
    if config is None:
        try:
            from loom import config as config_module
        except ImportError:
            return {}
        loader = getattr(config_module, "load_config", None)
        if loader is None:
            return {}
        try:
            config = loader(project_root)
        except Exception:  # a broken config is reported by the config layer, not here
            return {}
    if isinstance(config, dict):
        section = config.get(name)
    else:
        section = getattr(config, name, None)
        if section is not None and hasattr(section, "model_dump"):
            section = section.model_dump()
        elif section is not None and not isinstance(section, dict):
            section = vars(section)
    return dict(section or {})


def load_settings(project_root: Path, config: Any = None) -> RepoSettings:
    return RepoSettings.from_mapping(config_section(project_root, "repo", config))
