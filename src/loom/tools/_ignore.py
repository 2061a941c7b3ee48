"""Walk a project the way git sees it, for the search and listing tools.

The rules themselves (nested .gitignore files with negations, .git/info/exclude, default
and configured ignores) are repointel's `IgnoreRules`, so the tools and the repo index
agree on what is ignored; this module only adds a depth-limited, sorted walk.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from loom._beneath import open_dir
from loom.ignore import ALWAYS_IGNORED, DEFAULT_IGNORES, IgnoreRules, Layer

__all__ = ["DEFAULT_IGNORES", "Entry", "IgnoreWalker"]


@dataclass(frozen=True)
class Entry:
    rel: str  # posix path relative to the project root
    path: str  # absolute path
    is_dir: bool


class IgnoreWalker:
    def __init__(self, root: str, extra_ignores: Iterable[str] = ()) -> None:
        self.root = root
        self.rules = IgnoreRules(root, (*DEFAULT_IGNORES, *extra_ignores))

    def _layers_for(self, start_rel: str) -> tuple[Layer, ...]:
        """Ignore layers of the root and every folder down to `start_rel`."""
        layers = self.rules.layers_for("", self.rules.root_layers)
        parts = [] if start_rel in ("", ".") else start_rel.split("/")
        for depth in range(1, len(parts) + 1):
            layers = self.rules.layers_for("/".join(parts[:depth]), layers)
        return layers

    def walk(self, start_rel: str = "", max_depth: int | None = None) -> Iterator[Entry]:
        """Entries under `start_rel` (not itself), depth first, sorted by name per folder.
        Symlinked folders are listed but not entered (they may lead out of the project)."""
        start_rel = "" if start_rel in ("", ".") else start_rel.strip("/")
        yield from self._walk(start_rel, self._layers_for(start_rel), 1, max_depth)

    def _walk(
        self, rel_dir: str, layers: tuple[Layer, ...], depth: int, max_depth: int | None
    ) -> Iterator[Entry]:
        try:
            # listed through a descriptor opened beneath the root without following
            # links: a folder swapped for a symlink is not listed
            fd = open_dir(self.root, rel_dir)
        except OSError:
            return
        try:
            with os.scandir(fd) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            return
        finally:
            os.close(fd)
        for entry in entries:
            if entry.name in ALWAYS_IGNORED:
                continue
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if IgnoreRules.is_ignored(rel, is_dir, layers):
                continue
            yield Entry(rel, os.path.join(self.root, rel), is_dir)
            if is_dir and (max_depth is None or depth < max_depth):
                inner = self.rules.layers_for(rel, layers)
                yield from self._walk(rel, inner, depth + 1, max_depth)
