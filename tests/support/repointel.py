"""Repository intelligence in tests: the fixture repositories and an index over a folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "repos"


def make_index(root: Path, cache_dir: Path, **kwargs: Any) -> Any:
    """A RepoIndex of `root` keeping its cache under `cache_dir`."""
    from loom.repointel.cache import cache_file_for
    from loom.repointel.index import RepoIndex

    return RepoIndex(root, cache_file_for(cache_dir, root.resolve()), **kwargs)
