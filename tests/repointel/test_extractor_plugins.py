"""`loom.extractors` plugins inside repo intel: a plugin's language is detected, its
definitions indexed, a plugin's bug fails one file only, and an index built before the
plugin came reads the files it now knows (end to end through `loom map`: tests/plugins)."""

from __future__ import annotations

from pathlib import Path

import pytest

from loom.repointel import languages, tags
from loom.repointel.extractors import Extractor, check
from loom.repointel.tags import extract_symbols
from tests.support.files import age, write
from tests.support.repointel import make_index


def records(data: bytes) -> list[tuple[str, int, str]]:
    """Definitions of a toy language: `record NAME` lines."""
    return [
        (line.split()[1].decode(), n, "record")
        for n, line in enumerate(data.split(b"\n"), 1)
        if line.startswith(b"record ")
    ]


def install(monkeypatch: pytest.MonkeyPatch, *found: Extractor) -> None:
    by_language = {e.language: e for e in found}
    suffixes = {s: e.language for e in found for s in e.extensions}
    monkeypatch.setattr(tags, "extractors", lambda: by_language)
    monkeypatch.setattr(languages, "plugin_extensions", lambda: suffixes)


def toy(extract=records, extensions=(".rec",), language: str = "records") -> Extractor:
    return Extractor("toy", language, extensions, extract, None)


def test_a_plugin_language_is_detected_and_extracted(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, toy())
    assert languages.detect_language("models/user.REC") == "records"
    symbols = extract_symbols(b"record User\n  uses Account\nrecord Account\n", "records")
    assert [(d.name, d.line, d.kind, d.text) for d in symbols.definitions] == [
        ("User", 1, "record", "record User"),
        ("Account", 3, "record", "record Account"),
    ]
    # references default to every identifier, minus each definition's own name
    assert symbols.references == {"record": 2, "uses": 1, "Account": 1}


def test_a_plugin_replaces_a_built_in_language(monkeypatch: pytest.MonkeyPatch) -> None:
    assert languages.detect_language("index.php") == "php"  # the regex fallback
    install(monkeypatch, toy(extensions=(".php",), language="php-parsed"))
    assert languages.detect_language("index.php") == "php-parsed"


@pytest.mark.parametrize(
    ("extract", "why"),
    [
        (lambda data: 1 / 0, "extractor toy: ZeroDivisionError"),
        (lambda data: [("name", 0, "record")], "not (name, line, kind)"),
        (lambda data: [("name", "one", "record")], "not (name, line, kind)"),
    ],
)
def test_a_plugin_bug_fails_that_file_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, extract, why: str
) -> None:
    install(monkeypatch, toy(extract=extract))
    write(tmp_path / "proj", "a.rec", "record A\n")
    write(tmp_path / "proj", "b.py", "def b():\n    pass\n")
    index = make_index(tmp_path / "proj", tmp_path / "cache")
    index.refresh()
    assert why in (index.files["a.rec"].error or "")
    assert [d.name for d in index.symbols()["b.py"].definitions] == ["b"]


def test_the_shape_is_checked_with_what_is_missing() -> None:
    class NoExtensions:
        language = "x"
        extensions = ".x"  # a string, not a list of suffixes

        def extract(self, data: bytes) -> list:
            return []

    with pytest.raises(TypeError, match="extensions"):
        check("bad", NoExtensions())
    with pytest.raises(TypeError, match="language"):
        check("bad", object())


def test_an_index_built_before_the_plugin_reads_its_files_when_it_comes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    age(write(project, "schema.rec", "record Order\n"))
    index = make_index(project, tmp_path / "cache")
    index.refresh()
    assert index.files["schema.rec"].language is None  # nothing reads .rec yet
    install(monkeypatch, toy())
    again = make_index(project, tmp_path / "cache")  # the cache, not a cold build
    stats = again.refresh()
    assert stats.changed == ["schema.rec"]
    assert [d.name for d in again.symbols()["schema.rec"].definitions] == ["Order"]
