"""Repo-intel languages from plugins: the `loom.extractors` entry point group (seed 000).

An entry point names an extractor: any object (a module, a class, an instance) with

    language: str                 the language's name, e.g. "proto"
    extensions: Sequence[str]     the file suffixes it reads, e.g. (".proto",)
    extract(data: bytes) -> Iterable[tuple[str, int, str]]
                                  definitions: (name, 1-based line, kind)

and optionally `references(data: bytes) -> dict[str, int]` (name -> uses); without it
the references are every identifier in the file, as for the built-in regex languages.
A plugin's extensions win over the built-in table, so a plugin can replace the regex
fallback of a language with a real parser. A plugin that fails to load or does not have
this shape is logged once and skipped, never fatal; an extractor that raises on a file
makes that file a parse failure, like a tree-sitter error.

    pyproject.toml of a plugin:
    [project.entry-points."loom.extractors"]
    proto = "loom_proto:extractor"
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

ENTRY_POINT_GROUP = "loom.extractors"


@dataclass(frozen=True)
class Extractor:
    name: str  # the entry point's name
    language: str
    extensions: tuple[str, ...]
    extract: Callable[[bytes], Iterable[tuple[str, int, str]]]
    references: Callable[[bytes], dict[str, int]] | None


def check(name: str, value: Any) -> Extractor:
    """The extractor an entry point names; TypeError saying what is missing if the
    object does not have the shape above."""
    language = getattr(value, "language", None)
    extensions = getattr(value, "extensions", None)
    extract = getattr(value, "extract", None)
    references = getattr(value, "references", None)
    if not isinstance(language, str) or not language:
        raise TypeError("an extractor needs `language`, a non-empty string")
    if isinstance(extensions, str) or not isinstance(extensions, Iterable):
        raise TypeError("an extractor needs `extensions`, a list of suffixes like '.proto'")
    suffixes = tuple(str(e).lower() for e in extensions)
    if not suffixes or not all(s.startswith(".") and len(s) > 1 for s in suffixes):
        raise TypeError("an extractor's `extensions` are suffixes starting with '.'")
    if not callable(extract):
        raise TypeError("an extractor needs `extract(data: bytes)`")
    if references is not None and not callable(references):
        raise TypeError("an extractor's `references` must be callable")
    # a plugin's callables: their shape is checked when the index calls them
    return Extractor(name, language, suffixes, cast(Any, extract), cast(Any, references))


@functools.cache
def extractors() -> dict[str, Extractor]:
    """Language -> the plugin extractor for it (the first plugin to claim a language)."""
    from loom._entry_points import entry_points

    found: dict[str, Extractor] = {}
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        try:
            extractor = check(entry.name, entry.load())
        except Exception as exc:  # a broken plugin must never stop Loom
            import logging  # here: only a broken plugin needs it (~5 ms at `loom map`'s start)

            logging.getLogger(__name__).warning(
                "extractor plugin %s skipped: %s: %s", entry.name, type(exc).__name__, exc
            )
            continue
        found.setdefault(extractor.language, extractor)
    return found


@functools.cache
def plugin_extensions() -> dict[str, str]:
    """Suffix -> language, for the suffixes plugins read."""
    return {ext: e.language for e in extractors().values() for ext in e.extensions}


def definitions_from(extractor: Extractor, data: bytes) -> list[tuple[str, int, str]]:
    """The plugin's definitions, checked: a malformed row raises ValueError (the file
    becomes a parse failure, the index goes on)."""
    rows = []
    for row in extractor.extract(data):
        name, line, kind = row
        if not (isinstance(name, str) and isinstance(line, int) and isinstance(kind, str)) or (
            line < 1
        ):
            raise ValueError(f"extractor {extractor.name} gave {row!r}, not (name, line, kind)")
        rows.append((name, line, kind))
    return rows


def references_from(extractor: Extractor, data: bytes) -> dict[str, int] | None:
    """The plugin's references (None: it has no `references`), checked like the rows."""
    if extractor.references is None:
        return None
    given = extractor.references(data)
    if not isinstance(given, dict) or not all(
        isinstance(k, str) and isinstance(v, int) for k, v in given.items()
    ):
        raise ValueError(f"extractor {extractor.name}: references must map names to counts")
    return dict(given)
