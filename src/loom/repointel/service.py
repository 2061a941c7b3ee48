"""RepoIntel: one project's index, symbols and map behind one object, shared per root.

The CLI, the tools, the session's context window and the watcher all go through
`RepoIntel.for_root(root)`, so a process holds one index per project and the map is
computed once per repository state.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from loom.repointel.cache import cache_file_for
from loom.repointel.graphcache import GraphCache, graph_file_for
from loom.repointel.index import Progress, RefreshStats, RepoIndex
from loom.repointel.repomap import Estimator, default_estimator, fit_to_budget, rank_definitions
from loom.repointel.settings import RepoSettings
from loom.repointel.tags import FileSymbols


@dataclass(frozen=True)
class SymbolHit:
    name: str
    path: str
    line: int
    kind: str
    text: str


class _SymbolsOnDemand(Mapping[str, FileSymbols]):
    """The index's symbols, read when asked for (ranking asks for the few it renders)."""

    def __init__(self, index: RepoIndex) -> None:
        self._index = index

    def fetch(self, paths: list[str]) -> dict[str, FileSymbols]:
        return self._index.symbols_for(paths)

    def __getitem__(self, path: str) -> FileSymbols:
        found = self._index.symbols_for([path])
        if path not in found:
            raise KeyError(path)
        return found[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self._index.source_digests())

    def __len__(self) -> int:
        return len(self._index.source_digests())


MAP_FORMAT = 1  # bump when ranking or rendering changes: cached maps are then recomputed
_INSTANCES: dict[Path, RepoIntel] = {}
_INSTANCES_LOCK = threading.Lock()


class RepoIntel:
    def __init__(
        self, root: Path, settings: RepoSettings | None = None, cache_dir: Path | None = None
    ) -> None:
        from loom.paths import LoomPaths

        self.root = root.resolve()
        self.settings = settings or RepoSettings()
        cache_dir = cache_dir or LoomPaths.from_env().cache
        self.index = RepoIndex(
            self.root,
            cache_file_for(cache_dir, self.root),
            ignore=self.settings.ignore,
            max_file_bytes=self.settings.max_file_bytes,
        )
        self._fresh = False  # set by the watcher between changes; else refresh on each use
        self._lock = threading.RLock()

    @classmethod
    def for_root(cls, root: Path | str, settings: RepoSettings | None = None) -> RepoIntel:
        """The shared instance for a project root (created on first use)."""
        key = Path(root).resolve()
        with _INSTANCES_LOCK:
            instance = _INSTANCES.get(key)
            if instance is None:
                instance = _INSTANCES[key] = cls(key, settings)
            return instance

    @classmethod
    def forget(cls, root: Path | str) -> None:
        with _INSTANCES_LOCK:
            instance = _INSTANCES.pop(Path(root).resolve(), None)
        if instance is not None:
            instance.close()

    def refresh(self, progress: Progress | None = None) -> RefreshStats:
        with self._lock:
            return self.index.refresh(progress)

    def _ensure_fresh(self) -> None:
        if not self._fresh:
            self.refresh()

    def mark_fresh(self, fresh: bool) -> None:
        """The watcher keeps the index current; while it runs, uses skip the rescan."""
        self._fresh = fresh

    def relative(self, path: str) -> str:
        return relative_path(self.root, path)

    def repo_map(
        self,
        token_budget: int | None = None,
        focus_files: Iterable[str] = (),
        mentioned_identifiers: Iterable[str] = (),
        estimate: Estimator | None = None,
    ) -> str:
        budget = self.settings.map_tokens if token_budget is None else token_budget
        focus = sorted({self.relative(p) for p in focus_files})
        mentioned = sorted(set(mentioned_identifiers))
        # The default estimator is named, not imported, for the key: an unchanged repo's
        # map must not pay for loading the LLM layer.
        counter = (
            "default"
            if estimate is None
            else f"{getattr(estimate, '__module__', '')}.{getattr(estimate, '__name__', '')}"
        )
        with self._lock:
            self._ensure_fresh()
            key = hashlib.blake2b(
                repr(
                    (MAP_FORMAT, self.index.fingerprint, budget, focus, mentioned, counter)
                ).encode(),
                digest_size=16,
            ).hexdigest()
            cached = self.index.cache.get_map(key)
            if cached is not None:
                return cached
            estimate = estimate or default_estimator()
            # The graph comes from its own cache, updated for the changed files only;
            # symbols are read just for the files whose definitions get rendered.
            digests = self.index.source_digests()
            if not digests:  # no source file (an empty or non-code folder): no graph to
                return ""  # rank, and no numpy import (~0.1 s of a `loom run` start-up)
            inputs = GraphCache(graph_file_for(self.index.cache.path)).current(
                digests, self.index.symbols_for
            )
            symbols = _SymbolsOnDemand(self.index)
            limit = budget // 3 + 50  # far more names than fit; the rest is never rendered
            ranked = rank_definitions(symbols, focus, mentioned, limit, inputs)
            text = fit_to_budget(ranked, budget, estimate)
            if (
                len({(r.path, r.definition.name) for r in ranked}) >= limit
                and estimate(text) < 0.9 * budget
            ):
                text = fit_to_budget(
                    rank_definitions(symbols, focus, mentioned, None, inputs), budget, estimate
                )
            self.index.cache.put_map(key, text)
            return text

    def symbol_search(self, query: str, limit: int = 50, exact: bool = False) -> list[SymbolHit]:
        """Definitions whose name equals `query` or starts with it (case-sensitive first)."""
        with self._lock:
            self._ensure_fresh()
            symbols = self.index.symbols()
        hits: list[tuple[int, SymbolHit]] = []
        lowered = query.lower()
        for path in sorted(symbols):
            for d in symbols[path].definitions:
                if d.name == query:
                    order = 0
                elif exact:
                    continue
                elif d.name.startswith(query):
                    order = 1
                elif d.name.lower().startswith(lowered):
                    order = 2
                else:
                    continue
                hits.append((order, SymbolHit(d.name, path, d.line, d.kind, d.text.strip())))
        hits.sort(key=lambda h: (h[0], h[1].name, h[1].path, h[1].line))
        return [hit for _order, hit in hits[:limit]]

    def close(self) -> None:
        self.index.close()


def relative_path(root: Path, path: str) -> str:
    """`path` (absolute, or relative to the project) as a project-relative posix path."""
    candidate = Path(path)
    if candidate.is_absolute():
        try:
            return candidate.resolve().relative_to(root).as_posix()
        except ValueError:
            return candidate.as_posix()
    return candidate.as_posix().removeprefix("./")
