"""The [repo] settings repo intelligence reads, given by the caller (the Workspace
builds them from loom.config's typed [repo] section); never read from disk here.

Keys: repo.watch_enabled (default true), repo.map_tokens (1024), repo.ignore (extra
gitignore-style patterns), repo.max_file_bytes (1,000,000).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from loom import defaults
from loom.ignore import DEFAULT_IGNORES
from loom.repointel.scan import DEFAULT_MAX_FILE_BYTES


@dataclass(frozen=True)
class RepoSettings:
    watch_enabled: bool = True
    map_tokens: int = defaults.REPO_MAP_TOKENS
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
