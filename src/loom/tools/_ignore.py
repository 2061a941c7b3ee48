"""Walk a project the way git sees it: nested .gitignore files (negations too),
.git/info/exclude, a few always-ignored folders and extra configured patterns.

The deepest ignore file with a matching pattern decides, as in git.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import pathspec

ALWAYS_SKIPPED = frozenset({".git", ".hg", ".svn"})
DEFAULT_IGNORES: tuple[str, ...] = (
    "__pycache__/",
    "node_modules/",
    ".venv/",
    "venv/",
    ".tox/",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
    "*.egg-info/",
    ".DS_Store",
)


@dataclass(frozen=True)
class _Layer:
    base: str  # "" for the root, else "sub/dir/"
    spec: pathspec.GitIgnoreSpec

    def decide(self, rel: str, is_dir: bool) -> bool | None:
        local = rel[len(self.base) :]
        return self.spec.check_file(local + "/" if is_dir else local).include


def _layer(base: str, lines: Iterable[str]) -> _Layer | None:
    kept = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    return _Layer(base, pathspec.GitIgnoreSpec.from_lines(kept)) if kept else None


def _read(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read().splitlines()
    except OSError:
        return []


@dataclass(frozen=True)
class Entry:
    rel: str  # posix path relative to the project root
    path: str  # absolute path
    is_dir: bool


class IgnoreWalker:
    def __init__(self, root: str, extra_ignores: Iterable[str] = ()) -> None:
        self.root = root
        lines = [*DEFAULT_IGNORES, *extra_ignores, *_read(os.path.join(root, ".git/info/exclude"))]
        base = _layer("", lines)
        self._root_layers: tuple[_Layer, ...] = (base,) if base else ()

    def _ignored(self, layers: tuple[_Layer, ...], rel: str, is_dir: bool) -> bool:
        for layer in reversed(layers):
            verdict = layer.decide(rel, is_dir)
            if verdict is not None:
                return verdict
        return False

    def _layers_for(self, start_rel: str) -> tuple[_Layer, ...]:
        """Ignore layers of the root and every folder down to `start_rel`."""
        layers = self._root_layers
        parts = [] if start_rel in ("", ".") else start_rel.split("/")
        for depth in range(len(parts) + 1):
            base = "/".join(parts[:depth])
            lines = _read(os.path.join(self.root, base, ".gitignore"))
            layer = _layer(base + "/" if base else "", lines)
            if layer:
                layers = (*layers, layer)
        return layers

    def is_ignored(self, rel: str, is_dir: bool) -> bool:
        parts = rel.split("/")
        if any(p in ALWAYS_SKIPPED for p in parts):
            return True
        for depth in range(1, len(parts)):  # an ignored parent folder hides everything in it
            parent = "/".join(parts[:depth])
            if self._ignored(self._layers_for("/".join(parts[: depth - 1])), parent, True):
                return True
        return self._ignored(self._layers_for("/".join(parts[:-1])), rel, is_dir)

    def walk(self, start_rel: str = "", max_depth: int | None = None) -> Iterator[Entry]:
        """Entries under `start_rel` (not itself), depth first, sorted by name per folder."""
        start_rel = "" if start_rel in ("", ".") else start_rel.strip("/")
        yield from self._walk(start_rel, self._layers_for(start_rel), 1, max_depth)

    def _walk(
        self, rel_dir: str, layers: tuple[_Layer, ...], depth: int, max_depth: int | None
    ) -> Iterator[Entry]:
        try:
            with os.scandir(os.path.join(self.root, rel_dir)) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            if entry.name in ALWAYS_SKIPPED:
                continue
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if self._ignored(layers, rel, is_dir):
                continue
            yield Entry(rel, entry.path, is_dir)
            if is_dir and (max_depth is None or depth < max_depth):
                child = _layer(rel + "/", _read(os.path.join(entry.path, ".gitignore")))
                inner = (*layers, child) if child else layers
                yield from self._walk(rel, inner, depth + 1, max_depth)
