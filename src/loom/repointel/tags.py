"""Symbols of one file: definitions (name, line, kind, source line) and referenced names.

tree-sitter with the grammar wheel's tags query where we have one; a regex extractor for
other languages. Pure functions over bytes, so they run the same in a worker process.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import re
from collections import Counter
from dataclasses import dataclass
from stat import S_ISREG
from typing import NamedTuple

from loom._beneath import Escape, Folders, open_following_inside
from loom.repointel.extractors import (
    Extractor,
    definitions_from,
    extractors,
    references_from,
)
from loom.repointel.languages import grammar_for, has_grammar

BINARY_SNIFF_BYTES = 8192
MAX_LINE_CHARS = 160


class Definition(NamedTuple):
    name: str
    line: int  # 1-based
    kind: str  # function, class, method, module, ...
    text: str  # the source line, right-stripped and shortened


class FileSymbols:
    """Definitions and referenced names (name -> count) of one file.

    Read from the cache, definitions stay plain tuples until someone asks for them: the
    ranking needs only their names, and building 50,000 named tuples for a Django-sized
    repo would cost a good part of the "one file changed" budget.
    """

    __slots__ = ("_definitions", "_raw", "references")

    def __init__(
        self, definitions: list[Definition] | None = None, references: dict[str, int] | None = None
    ) -> None:
        self._definitions: list[Definition] | None = definitions if definitions else []
        self._raw: list[tuple] | None = None
        self.references: dict[str, int] = references if references is not None else {}

    @property
    def definitions(self) -> list[Definition]:
        if self._definitions is None:
            self._definitions = list(map(Definition._make, self._raw or ()))
            self._raw = None
        return self._definitions

    def names(self) -> set[str]:
        """Names defined here (cheap: no Definition objects are built)."""
        rows = self._raw if self._definitions is None else self._definitions
        return {row[0] for row in rows or ()}

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, FileSymbols)
            and self.definitions == other.definitions
            and self.references == other.references
        )

    def __repr__(self) -> str:
        return f"FileSymbols({self.definitions!r}, {self.references!r})"

    def to_plain(self) -> tuple:
        return ([tuple(d) for d in self.definitions], self.references)

    @classmethod
    def from_plain(cls, plain: tuple) -> FileSymbols:
        """From the cache's plain form; raises ValueError/TypeError if it is not that."""
        defs, refs = plain
        if not isinstance(defs, list) or not isinstance(refs, dict):
            raise ValueError("not a symbols entry")
        if defs and not (len(defs[0]) == 4 and isinstance(defs[0][1], int)):
            raise ValueError("not a symbols entry")
        symbols = cls(None, refs)
        symbols._definitions, symbols._raw = None, defs
        return symbols


class BinaryFile(ValueError):
    """The file holds NUL bytes in its first block: it is not source text."""


def content_digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def is_binary(data: bytes) -> bool:
    return b"\x00" in data[:BINARY_SNIFF_BYTES]


def _line_text(lines: list[bytes], row: int) -> str:
    if row >= len(lines):
        return ""
    text = lines[row].decode("utf-8", "replace").rstrip()
    return text if len(text) <= MAX_LINE_CHARS else text[: MAX_LINE_CHARS - 1] + "…"


def extract_symbols(data: bytes, language: str) -> FileSymbols:
    """Definitions and references in `data`. Raises BinaryFile for binary content.

    Syntax errors are fine: tree-sitter recovers and we keep what it could read.
    """
    if is_binary(data):
        raise BinaryFile("binary content")
    plugin = extractors().get(language)
    if plugin is not None:
        return _extract_plugin(data, plugin)
    if has_grammar(language):
        grammar = grammar_for(language)
        if grammar is not None:
            return _extract_tree_sitter(data, grammar)
    return _extract_regex(data)


def _extract_tree_sitter(data: bytes, grammar) -> FileSymbols:
    import tree_sitter

    tree = tree_sitter.Parser(grammar.ts_language).parse(data)
    lines = data.split(b"\n")
    symbols = FileSymbols()
    refs: Counter[str] = Counter()
    seen_defs: set[tuple[str, int]] = set()
    for _pattern, captures in tree_sitter.QueryCursor(grammar.query).matches(tree.root_node):
        role = next(
            (key for key in captures if key.startswith(("definition.", "reference."))), None
        )
        names = captures.get("name")
        if role is None or not names:
            continue
        for node in names:
            name = (node.text or b"").decode("utf-8", "replace")
            if not name:
                continue
            if role.startswith("definition."):
                row = captures[role][0].start_point[0]
                if (name, row) in seen_defs:
                    continue
                seen_defs.add((name, row))
                symbols.definitions.append(
                    Definition(name, row + 1, role.split(".", 1)[1], _line_text(lines, row))
                )
            else:
                refs[name] += 1
    symbols.definitions.sort(key=lambda d: d.line)
    symbols.references = dict(refs)
    return symbols


_DEF_RE = re.compile(
    rb"^[ \t]*(?:(?:export|public|private|protected|internal|static|abstract|final|async|"
    rb"override|open|inline|pub|local|sealed|data|default)\s+)*"
    rb"(def|defp|function|func|fun|fn|class|struct|interface|trait|enum|module|object|"
    rb"protocol|sub|type|record|impl)\s+([A-Za-z_$][\w$]*)",
    re.MULTILINE,
)
_IDENT_RE = re.compile(rb"\b[A-Za-z_][A-Za-z0-9_]{2,}\b")
_KIND = {
    b"def": "function",
    b"defp": "function",
    b"function": "function",
    b"func": "function",
    b"fun": "function",
    b"fn": "function",
    b"sub": "function",
}


def _extract_plugin(data: bytes, plugin: Extractor) -> FileSymbols:
    """A `loom.extractors` plugin's definitions; its references, or every identifier."""
    try:
        rows = definitions_from(plugin, data)
        references = references_from(plugin, data)
    except (ValueError, RuntimeError, RecursionError):
        raise
    except Exception as exc:  # the plugin's bug is this file's parse failure, no more
        raise RuntimeError(f"extractor {plugin.name}: {type(exc).__name__}: {exc}") from exc
    lines = data.split(b"\n")
    definitions = [
        Definition(name, line, kind, _line_text(lines, line - 1)) for name, line, kind in rows
    ]
    if references is None:
        counted: Counter[str] = Counter(m.decode("ascii") for m in _IDENT_RE.findall(data))
        counted.subtract(Counter(d.name for d in definitions))
        references = {name: n for name, n in counted.items() if n > 0}
    return FileSymbols(definitions, references)


def _extract_regex(data: bytes) -> FileSymbols:
    lines = data.split(b"\n")
    symbols = FileSymbols()
    defined: Counter[str] = Counter()
    for match in _DEF_RE.finditer(data):
        row = data.count(b"\n", 0, match.start())
        name = match.group(2).decode("utf-8", "replace")
        kind = _KIND.get(match.group(1), "class")
        symbols.definitions.append(Definition(name, row + 1, kind, _line_text(lines, row)))
        defined[name] += 1
    refs: Counter[str] = Counter(m.decode("ascii") for m in _IDENT_RE.findall(data))
    refs.subtract(defined)  # a definition's own name is not a use of it
    symbols.references = {name: n for name, n in refs.items() if n > 0}
    return symbols


@dataclass
class ParsedFile:
    path: str
    size: int
    mtime_ns: int
    digest: str
    language: str | None
    symbols: FileSymbols | None
    error: str | None = None
    blob: bytes | None = None  # the symbols, encoded (set by pool workers instead)
    n_defs: int = 0

    def encoded(self) -> bytes | None:
        if self.blob is None and self.symbols is not None:
            self.blob = encode_symbols(self.symbols)
        return self.blob


def encode_symbols(symbols: FileSymbols) -> bytes:
    return marshal.dumps(symbols.to_plain())


def decode_symbols(blob: bytes) -> FileSymbols:
    """Raises ValueError/EOFError/TypeError for bytes that are not an encoded entry."""
    return FileSymbols.from_plain(marshal.loads(blob))


def read_and_extract(
    root: str, path: str, language: str | None, folders: Folders | None = None
) -> ParsedFile | None:
    """Read one file, hash it, extract its symbols. None if it vanished meanwhile."""
    try:
        # opened beneath the root without following links out of it: a link leading
        # outside (or swapped in meanwhile) is refused (Escape), never read
        with os.fdopen(open_following_inside(root, path, folders), "rb") as handle:
            stat = os.fstat(handle.fileno())
            if not S_ISREG(stat.st_mode):  # swapped for a FIFO or a device meanwhile
                return ParsedFile(path, 0, 0, "", language, None, "not a regular file")
            data = handle.read()
    except Escape:
        return ParsedFile(path, 0, 0, "", language, None, "a symlink that leaves the project")
    except FileNotFoundError:
        return None
    except OSError as exc:  # permission denied, symlink loop, is a directory, ...
        return ParsedFile(path, 0, 0, "", language, None, f"unreadable: {exc.strerror or exc}")
    parsed = ParsedFile(path, stat.st_size, stat.st_mtime_ns, content_digest(data), language, None)
    if language is None:
        return parsed
    try:
        parsed.symbols = extract_symbols(data, language)
        parsed.n_defs = len(parsed.symbols.definitions)
    except BinaryFile:
        parsed.language, parsed.error = None, "binary"
    except (ValueError, RuntimeError, RecursionError) as exc:
        parsed.error = f"parse failed: {exc}"
    return parsed


def parse_batch(root: str, items: list[tuple[str, str | None]]) -> list[ParsedFile]:
    """Worker entry point for the process pool: one chunk of files. Symbols come back
    encoded, ready for the cache: the parent need not rebuild objects it only stores."""
    out: list[ParsedFile] = []
    with Folders(root) as folders:
        for path, language in items:
            parsed = read_and_extract(root, path, language, folders)
            if parsed is not None:
                parsed.encoded()
                parsed.symbols = None
                out.append(parsed)
    return out
