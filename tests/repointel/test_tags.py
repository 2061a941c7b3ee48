"""Symbols from the real grammar wheels (and the regex fallback), and bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from loom.repointel.languages import detect_language, grammar_for
from loom.repointel.tags import BinaryFile, extract_symbols, read_and_extract

SAMPLES: dict[str, tuple[str, str, str]] = {
    # language: (source, a defined name, a referenced name)
    "python": (
        "class Shape:\n    def area(self):\n        return compute(self)\n",
        "Shape",
        "compute",
    ),
    "javascript": ("function draw(ctx) { return paint(ctx); }\n", "draw", "paint"),
    "typescript": (
        "interface Box { w: number }\nfunction size(b: Box) { return measure(b); }\n",
        "Box",
        "measure",
    ),
    "tsx": ("function App() { return render(<div/>); }\n", "App", "render"),
    "go": ("package main\nfunc Serve() { Listen() }\n", "Serve", "Listen"),
    "rust": (
        "struct Point { x: i32 }\nfn norm(p: Point) -> i32 { square(p.x) }\n",
        "norm",
        "square",
    ),
    "java": (
        "class Greeter { void greet() { System.out.println(format()); } }\n",
        "Greeter",
        "format",
    ),
    "c": ("int add(int a, int b) { return helper(a) + b; }\n", "add", "helper"),
    "cpp": (
        "class Engine { public: void start(); };\nvoid run() { ignite(); }\n",
        "Engine",
        "ignite",
    ),
    "ruby": ("class Robot\n  def walk\n    step_forward\n  end\nend\n", "Robot", "step_forward"),
    "elixir": ("defmodule Bank do\n  def deposit(x), do: Ledger.add(x)\nend\n", "deposit", "add"),
}


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_grammar_wheels_give_definitions_and_references(language: str) -> None:
    assert grammar_for(language) is not None, f"grammar wheel for {language} not installed"
    source, defined, referenced = SAMPLES[language]
    symbols = extract_symbols(source.encode(), language)
    assert defined in {d.name for d in symbols.definitions}
    assert symbols.references.get(referenced, 0) >= 1
    definition = next(d for d in symbols.definitions if d.name == defined)
    assert defined in definition.text and definition.line >= 1


def test_python_extra_query_links_base_classes_and_annotations() -> None:
    source = b"from base import Model\n\nclass User(Model):\n    age: Age\n"
    refs = extract_symbols(source, "python").references
    assert refs["Model"] >= 2 and refs["Age"] == 1


def test_regex_fallback_for_languages_without_a_wheel() -> None:
    source = b"<?php\nclass Invoice {}\nfunction total_due($i) { return sum_lines($i); }\n"
    symbols = extract_symbols(source, "php")
    assert [(d.name, d.line) for d in symbols.definitions] == [("Invoice", 2), ("total_due", 3)]
    assert symbols.references["sum_lines"] == 1
    assert "total_due" not in symbols.references  # its own definition is not a use


def test_syntax_errors_keep_what_can_be_read() -> None:
    source = b"def broken(:\n    pass\n\nclass StillHere:\n    pass\n"
    names = {d.name for d in extract_symbols(source, "python").definitions}
    assert "StillHere" in names


def test_invalid_utf8_is_read_with_replacement() -> None:
    source = b"def caf\xe9():\n    pass\n\ndef fine():\n    return 1\n"
    symbols = extract_symbols(source, "python")
    assert "fine" in {d.name for d in symbols.definitions}


def test_binary_content_is_refused() -> None:
    with pytest.raises(BinaryFile):
        extract_symbols(b"\x7fELF\x00\x00\x01def x(): pass", "python")


def test_binary_file_with_source_extension_is_indexed_without_symbols(tmp_path: Path) -> None:
    (tmp_path / "blob.py").write_bytes(b"\x00\x01\x02" * 100)
    parsed = read_and_extract(str(tmp_path), "blob.py", "python")
    assert parsed is not None and parsed.symbols is None and parsed.error == "binary"


def test_file_deleted_before_parse_is_skipped(tmp_path: Path) -> None:
    assert read_and_extract(str(tmp_path), "gone.py", "python") is None


def test_language_detection() -> None:
    assert detect_language("a/b/c.tsx") == "tsx"
    assert detect_language("lib.EX") == "elixir"
    assert detect_language("Makefile") is None
