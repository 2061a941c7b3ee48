"""The ASCII fast path of the token estimate finds the very pieces the one-alternation
scan finds (`loom.llm.tokens._estimate`)."""

from __future__ import annotations

import random
from pathlib import Path

from loom.llm import tokens


def test_the_fast_path_counts_what_the_piece_by_piece_scan_counts() -> None:
    source = Path(tokens.__file__).read_text(encoding="utf-8")
    rng = random.Random(7)
    alphabet = (
        "aAbBzZ09 \t\n\r\x0b\x0c\x1c\x1f\x00\x7f  ()->=:;.,_-{}[]\"'\\camelCaseHTTPServer1234"
    )
    samples = [source, source.upper(), "x" * 40, "HTTPServerError snake_case_name 12345"]
    samples += [
        "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80))) for _ in range(3000)
    ]
    for text in samples:
        assert abs(tokens._estimate(text) - tokens._estimate_by_piece(text)) < 1e-6, repr(text)


def test_non_ascii_text_takes_the_piece_by_piece_scan() -> None:
    text = "naïve café\n\u00a0\u2028 日本語 emoji 🙂"
    assert tokens._estimate(text) == tokens._estimate_by_piece(text)
