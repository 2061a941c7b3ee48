"""Git's ignore rules: nested .gitignore files (negations too), .git/info/exclude and a
configured ignore list. The deepest file with a matching pattern decides, as in git."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pathspec

ALWAYS_IGNORED = frozenset({".git", ".hg", ".svn"})
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


class Layer:
    """The rules of one ignore file, relative to the directory it applies to.

    pathspec parses and compiles git's patterns; matching walks the compiled regexes
    directly (last match wins), with one combined regex when there are no negations:
    the scan calls this for every file of the tree, and pathspec's own per-call path
    normalization would cost most of a warm rescan.
    """

    def __init__(self, base: str, spec: pathspec.PathSpec) -> None:
        self.base = base  # "" for the project root, else "sub/dir/"
        self.rules = [
            (p.regex, bool(p.include))
            for p in spec.patterns
            if p.include is not None and p.regex is not None
        ]
        self.combined: re.Pattern[str] | None = None
        if all(include for _regex, include in self.rules):
            self.combined = re.compile(
                "|".join(
                    f"(?:{regex.pattern.replace('(?P<ps_d>/)', '/')})" for regex, _ in self.rules
                )
            )

    def decide(self, rel_path: str, is_dir: bool) -> bool | None:
        """True: ignored, False: re-included by a negation, None: no pattern matched."""
        local = rel_path[len(self.base) :]
        if is_dir:
            local += "/"
        if self.combined is not None:
            return True if self.combined.match(local) else None
        for regex, include in reversed(self.rules):
            if regex.match(local):
                return include
        return None


def _layer(base: str, lines: Iterable[str]) -> Layer | None:
    lines = [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        return None
    import pathspec  # here, not at import: it costs start-up ~10 ms (hyperscan, re2 probes)

    return Layer(base, pathspec.GitIgnoreSpec.from_lines(lines))


def _read_lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read().splitlines()
    except OSError:
        return []


class IgnoreRules:
    """Root layers plus one layer per directory that holds a .gitignore."""

    def __init__(self, root: str, extra_patterns: Iterable[str] = DEFAULT_IGNORES) -> None:
        self.root = root
        layers = [
            _layer("", extra_patterns),
            _layer("", _read_lines(os.path.join(root, ".git", "info", "exclude"))),
        ]
        self.root_layers: tuple[Layer, ...] = tuple(layer for layer in layers if layer)

    def layers_for(
        self, rel_dir: str, parent: tuple[Layer, ...], has_gitignore: bool = True
    ) -> tuple[Layer, ...]:
        """`parent` plus the .gitignore inside `rel_dir`, if any ("" is the root).
        `has_gitignore=False` (the caller listed the folder) skips the failed open."""
        if not has_gitignore:
            return parent
        base = rel_dir + "/" if rel_dir else ""
        layer = _layer(base, _read_lines(os.path.join(self.root, base, ".gitignore")))
        return (*parent, layer) if layer else parent

    @staticmethod
    def is_ignored(rel_path: str, is_dir: bool, layers: tuple[Layer, ...]) -> bool:
        name = rel_path.rsplit("/", 1)[-1]
        if name in ALWAYS_IGNORED:
            return True
        for layer in reversed(layers):
            decision = layer.decide(rel_path, is_dir)
            if decision is not None:
                return decision
        return False

    def path_is_ignored(self, rel_path: str, is_dir: bool = False) -> bool:
        """Whether a path (or any directory above it) is ignored."""
        parts = rel_path.split("/")
        layers = self.layers_for("", self.root_layers)
        for depth in range(1, len(parts) + 1):
            prefix = "/".join(parts[:depth])
            last = depth == len(parts)
            if self.is_ignored(prefix, is_dir or not last, layers):
                return True
            if not last:
                layers = self.layers_for(prefix, layers)
        return False
