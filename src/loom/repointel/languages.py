"""Which language a file is in, and the tree-sitter grammar + tags query for it.

Grammars come from the per-language wheels (tree-sitter-python, ...). Each wheel ships a
`queries/tags.scm` with definition and reference captures; where the wheel's query misses
something we need for ranking, `queries/<lang>-extra.scm` (ours) is appended.
Languages without a wheel get the regex extractor in `tags.py`; plugins add languages
or replace one (`extractors.py`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from pathlib import PurePath
from typing import Any

from loom.repointel.extractors import plugin_extensions

# extension -> language name
EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".rb": "ruby",
    ".ex": "elixir",
    ".exs": "elixir",
    # regex fallback languages
    ".php": "php",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".swift": "swift",
    ".scala": "scala",
    ".cs": "csharp",
    ".lua": "lua",
    ".sh": "shell",
    ".bash": "shell",
    ".pl": "perl",
    ".pm": "perl",
    ".dart": "dart",
    ".erl": "erlang",
    ".hs": "haskell",
    ".ml": "ocaml",
    ".clj": "clojure",
    ".r": "r",
    ".jl": "julia",
    ".zig": "zig",
    ".nim": "nim",
    ".vue": "vue",
    ".svelte": "svelte",
}

# language -> (wheel module, function returning the language pointer, tags query owner)
_GRAMMARS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "python": ("tree_sitter_python", "language", ("tree_sitter_python",)),
    "javascript": ("tree_sitter_javascript", "language", ("tree_sitter_javascript",)),
    # TypeScript extends JavaScript: its wheel's tags only cover the TS additions.
    "typescript": (
        "tree_sitter_typescript",
        "language_typescript",
        ("tree_sitter_javascript", "tree_sitter_typescript"),
    ),
    "tsx": (
        "tree_sitter_typescript",
        "language_tsx",
        ("tree_sitter_javascript", "tree_sitter_typescript"),
    ),
    "go": ("tree_sitter_go", "language", ("tree_sitter_go",)),
    "rust": ("tree_sitter_rust", "language", ("tree_sitter_rust",)),
    "java": ("tree_sitter_java", "language", ("tree_sitter_java",)),
    "c": ("tree_sitter_c", "language", ("tree_sitter_c",)),
    "cpp": ("tree_sitter_cpp", "language", ("tree_sitter_cpp",)),
    "ruby": ("tree_sitter_ruby", "language", ("tree_sitter_ruby",)),
    "elixir": ("tree_sitter_elixir", "language", ("tree_sitter_elixir",)),
}

_SHEBANGS = {
    "python": "python",
    "node": "javascript",
    "ruby": "ruby",
    "bash": "shell",
    "sh": "shell",
    "elixir": "elixir",
    "perl": "perl",
}


def detect_language(path: str | PurePath) -> str | None:
    """The language of a file from its extension (None: not a source file we know).
    An extractor plugin's suffixes win over the built-in table."""
    name = str(path).rsplit("/", 1)[-1]
    dot = name.rfind(".")
    if dot <= 0:
        return None
    suffix = name[dot:].lower()
    return plugin_extensions().get(suffix) or EXTENSIONS.get(suffix)


def language_from_shebang(first_line: bytes) -> str | None:
    if not first_line.startswith(b"#!"):
        return None
    words = first_line[2:].decode("utf-8", "replace").replace("/", " ").split()
    for word in reversed(words):
        name = word.rstrip("0123456789.")
        if name in _SHEBANGS:
            return _SHEBANGS[name]
    return None


def has_grammar(language: str) -> bool:
    return language in _GRAMMARS


@dataclass(frozen=True)
class Grammar:
    language: str
    ts_language: Any  # tree_sitter.Language
    query: Any  # tree_sitter.Query


def _query_text(owner: str) -> str:
    from importlib import resources  # here: only parsing needs it, not a warm `loom map`

    return (resources.files(owner) / "queries" / "tags.scm").read_text("utf-8")


def _extra_query(language: str) -> str:
    from importlib import resources

    extra = resources.files("loom.repointel") / "queries" / f"{language}-extra.scm"
    return extra.read_text("utf-8") if extra.is_file() else ""


@cache
def grammar_for(language: str) -> Grammar | None:
    """Load the grammar wheel and compile its tags query (None if the wheel is missing)."""
    spec = _GRAMMARS.get(language)
    if spec is None:
        return None
    import tree_sitter

    module_name, func, owners = spec
    try:
        module = importlib.import_module(module_name)
        ts_language = tree_sitter.Language(getattr(module, func)())
        source = "\n".join(_query_text(owner) for owner in owners)
        source += "\n" + _extra_query(language)
        query = tree_sitter.Query(ts_language, source)
    except (ImportError, OSError, AttributeError):
        return None
    return Grammar(language, ts_language, query)
