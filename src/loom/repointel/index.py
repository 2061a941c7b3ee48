"""RepoIndex: the files of one project and their symbols, kept current incrementally.

`refresh()` stats the tree, re-reads only files whose size or mtime changed (or whose
mtime was too recent to trust), parses them (over a process pool on a cold start) and
writes the changes to the on-disk cache in one transaction.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from loom.ignore import DEFAULT_IGNORES
from loom.repointel.cache import FileRecord, RepoCache
from loom.repointel.scan import (
    DEFAULT_MAX_FILE_BYTES,
    DirCache,
    FileStat,
    load_dir_cache,
    save_dir_cache,
    scan_project,
)
from loom.repointel.tags import (
    FileSymbols,
    ParsedFile,
    decode_symbols,
    parse_batch,
    read_and_extract,
)

Progress = Callable[[int, int], None]  # (done, total)

POOL_THRESHOLD = 400  # fewer files than this parse in-process (a pool costs ~0.3 s to start)
CHUNK = 200
RACY_WINDOW_NS = 2_000_000_000  # mtimes this recent may hide a same-size rewrite


@dataclass
class RefreshStats:
    files: int = 0
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    parsed: int = 0
    too_large: int = 0
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def any_change(self) -> bool:
        return bool(self.added or self.changed or self.removed)


def _parse_serial(
    root: str, items: list[tuple[str, str | None]], progress: Progress | None
) -> Iterable[ParsedFile]:
    total = len(items)
    for done, (path, language) in enumerate(items, 1):
        parsed = read_and_extract(root, path, language)
        if progress and (done % 50 == 0 or done == total):
            progress(done, total)
        if parsed is not None:
            yield parsed


def _parse_all(
    root: str, items: list[tuple[str, str | None]], progress: Progress | None, workers: int | None
) -> Iterable[ParsedFile]:
    """Parse files, spread over a process pool when there are many (a cold start)."""
    workers = workers or os.cpu_count() or 1
    if len(items) < POOL_THRESHOLD or workers < 2:
        yield from _parse_serial(root, items, progress)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    # fork is cheapest, but only safe while no other thread runs (e.g. the watcher).
    method = "fork" if threading.active_count() == 1 else "forkserver"
    chunks = [items[i : i + CHUNK] for i in range(0, len(items), CHUNK)]
    finished: set[int] = set()
    try:
        with ProcessPoolExecutor(
            max_workers=workers, mp_context=multiprocessing.get_context(method)
        ) as pool:
            futures = {pool.submit(parse_batch, root, chunk): n for n, chunk in enumerate(chunks)}
            for future in as_completed(futures):
                batch = future.result()
                finished.add(futures[future])
                yield from batch
                if progress:
                    progress(sum(len(chunks[n]) for n in finished), len(items))
    except (BrokenProcessPool, OSError):
        # A worker died (out of memory, killed): finish the rest here rather than fail.
        rest = [item for n, chunk in enumerate(chunks) if n not in finished for item in chunk]
        yield from _parse_serial(root, rest, None)


class RepoIndex:
    def __init__(
        self,
        root: Path,
        cache_path: Path,
        *,
        ignore: Iterable[str] = DEFAULT_IGNORES,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        workers: int | None = None,
    ) -> None:
        self.root = root.resolve()
        self.ignore = tuple(ignore)
        self.max_file_bytes = max_file_bytes
        self.workers = workers
        self.cache = RepoCache(cache_path)
        self.files: dict[str, FileRecord] = {}
        self.fingerprint = ""
        self._symbols: dict[str, FileSymbols] = {}
        self._loaded = False
        self._dirs: DirCache | None = None
        self._dirs_path = cache_path.with_name(cache_path.name + ".dirs")
        self._lock = threading.RLock()

    def refresh(self, progress: Progress | None = None) -> RefreshStats:
        started = time.perf_counter()
        with self._lock:
            stats = self._refresh(progress)
        stats.seconds = time.perf_counter() - started
        return stats

    def _refresh(self, progress: Progress | None) -> RefreshStats:
        if not self._loaded:
            self.files = self.cache.load_files()
            self.fingerprint = self.cache.fingerprint() or ""
            self._loaded = True
        if self._dirs is None:
            self._dirs = load_dir_cache(self._dirs_path)
        scan = scan_project(str(self.root), self.ignore, self.max_file_bytes, self._dirs)
        if scan.dirs is not None and (
            scan.relisted
            or self._dirs is None
            or self._dirs.key != scan.dirs.key
            or self._dirs.gitignores != scan.dirs.gitignores
        ):
            save_dir_cache(self._dirs_path, scan.dirs)
        self._dirs = scan.dirs
        stats = RefreshStats(
            files=len(scan.files), too_large=len(scan.too_large), problems=list(scan.problems)
        )
        stale: list[tuple[str, str | None]] = []
        for path, st in scan.files.items():
            known = self.files.get(path)
            if known is None:
                stats.added.append(path)
            elif (
                known.racy
                or known.size != st.size
                or known.mtime_ns != st.mtime_ns
                # an extractor plugin came or went: the file is read as another language
                or (known.language != st.language and known.error != "binary")
            ):
                stats.changed.append(path)
            else:
                continue
            stale.append((path, st.language))
        stats.removed = [p for p in self.files if p not in scan.files]
        updates, new_symbols = self._read(stale, scan.files, progress, stats)
        # A file re-read only because its mtime was racy, with the same content, is no change.
        stats.changed = [
            p for p in stats.changed if p in updates and updates[p].digest != self.files[p].digest
        ]
        for path in stats.removed:
            self.files.pop(path, None)
            self._symbols.pop(path, None)
        self.files.update(updates)
        if updates or stats.removed:
            self.fingerprint = self._fingerprint()
            self.cache.save(updates, stats.removed, new_symbols, self.fingerprint)
            if stats.removed:
                self.cache.drop_stale_symbols()
        return stats

    def _read(
        self,
        stale: list[tuple[str, str | None]],
        stats_now: dict[str, FileStat],
        progress: Progress | None,
        stats: RefreshStats,
    ) -> tuple[dict[str, FileRecord], dict[str, tuple[str, bytes]]]:
        updates: dict[str, FileRecord] = {}
        new_symbols: dict[str, tuple[str, bytes]] = {}
        now = time.time_ns()
        sources: list[tuple[str, str | None]] = [(p, lang) for p, lang in stale if lang]
        for path, lang in stale:  # not source: size and mtime are its identity
            if lang is None:
                st = stats_now[path]
                updates[path] = FileRecord(
                    st.size,
                    st.mtime_ns,
                    None,
                    f"{st.size}:{st.mtime_ns}",
                    now - st.mtime_ns < RACY_WINDOW_NS,
                )
        for parsed in _parse_all(str(self.root), sources, progress, self.workers):
            stats.parsed += 1
            if not parsed.digest:  # unreadable: remember the scan's stat, retry when it moves
                st = stats_now[parsed.path]
                parsed.size, parsed.mtime_ns = st.size, st.mtime_ns
            record = FileRecord(
                parsed.size,
                parsed.mtime_ns,
                parsed.language,
                parsed.digest,
                now - parsed.mtime_ns < RACY_WINDOW_NS,
                parsed.error,
                parsed.n_defs,
            )
            old = self.files.get(parsed.path)
            updates[parsed.path] = record
            if parsed.error:
                stats.problems.append(f"{parsed.path}: {parsed.error}")
            if old is not None and old.digest == parsed.digest:
                continue  # same content: the cached symbols stand
            blob = parsed.encoded()
            if blob is not None:
                new_symbols[parsed.path] = (parsed.digest, blob)
            if parsed.symbols is not None:
                self._symbols[parsed.path] = parsed.symbols
            else:
                self._symbols.pop(parsed.path, None)  # parsed elsewhere: load on demand
        # Files that vanished between the scan and the read are simply gone.
        for path, _lang in sources:
            if path not in updates:
                stats.removed.append(path)
                stats.added = [p for p in stats.added if p != path]
                stats.changed = [p for p in stats.changed if p != path]
        return updates, new_symbols

    def _fingerprint(self) -> str:
        digest = hashlib.blake2b(digest_size=16)
        for path in sorted(self.files):
            digest.update(f"{path}\0{self.files[path].digest}\n".encode())
        return digest.hexdigest()

    def source_digests(self) -> dict[str, str]:
        """{path: content digest} of the files that have symbols (parsed source)."""
        with self._lock:
            return {
                p: r.digest
                for p, r in self.files.items()
                if r.language is not None and r.error is None
            }

    def symbols(self) -> dict[str, FileSymbols]:
        """Symbols of every source file (from memory, the cache, or parsed again)."""
        return self.symbols_for(self.files)

    def symbols_for(self, paths: Iterable[str]) -> dict[str, FileSymbols]:
        """Symbols of those of `paths` that are source files (memory, cache or parsed)."""
        with self._lock:
            wanted = {
                p: r.digest
                for p in paths
                if (r := self.files.get(p)) is not None
                and r.language is not None
                and r.error is None
                and p not in self._symbols
            }
            if wanted:
                self._symbols.update(self.cache.load_symbols(wanted))
                missing = [(p, self.files[p].language) for p in wanted if p not in self._symbols]
                recomputed: dict[str, tuple[str, bytes]] = {}
                for parsed in _parse_all(str(self.root), missing, None, self.workers):
                    blob = parsed.encoded()
                    if blob is not None:
                        self._symbols[parsed.path] = parsed.symbols or decode_symbols(blob)
                        recomputed[parsed.path] = (parsed.digest, blob)
                if recomputed:
                    self.cache.save({}, [], recomputed, self.fingerprint)
            return {
                p: s for p in paths if (s := self._symbols.get(p)) is not None and p in self.files
            }

    def close(self) -> None:
        self.cache.close()
