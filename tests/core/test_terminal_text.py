"""The one sanitizer for text shown on a terminal (`loom.core.text`): what a terminal
would act on (escape sequences, C1 controls, carriage returns, bidi and zero-width
characters) comes out as its escape; ordinary text, newlines in a block, emoji come out
as they went in."""

from __future__ import annotations

import json
import sys
import unicodedata

import pytest

from loom.core.text import json_visible, visible, visible_block

HOSTILE = {
    "OSC 52 clipboard write": "\x1b]52;c;cm0gLXJmIH4=\x07",
    "OSC 8 link": "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\",
    "OSC 0 title": "\x1b]0;pwned\x07",
    "CSI 2J": "\x1b[2J",
    "cursor up, erase line": "\x1b[1A\x1b[2K\x1b[1G",
    "DCS": "\x1bP1$r\x1b\\",
    "APC": "\x1b_payload\x1b\\",
    "C1 CSI": "\x9b2J",
    "C1 OSC": "\x9d52;c;eA==\x9c",
    "lone ESC": "\x1b",
    "carriage return": "safe\rrm -rf ~",
    "bidi override": "\u202eexe.txt",
    "bidi isolate": "\u2066x\u2069",
    "zero-width space": "a\u200bb",
    "tag characters": "\U000e0041\U000e0042",
    "lone surrogate": "\ud83d",
    "line separator": "a\u2028b",
}
RAW = set("\x1b\x07\x9b\x9c\x9d\r\u202e\u2066\u2069\u200b\u2028\U000e0041\ud83d")


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_nothing_a_terminal_acts_on_survives(text: str) -> None:
    for shown in (visible(text), visible_block(text)):
        assert not RAW & set(shown), repr(shown)
        assert shown.isprintable()  # (no newline in these)


def test_an_escape_is_shown_as_its_code() -> None:
    assert visible_block("\x1b[2J\x9b\u202e") == "\\x1b[2J\\x9b\\u202e"
    assert visible("touch SPOOFED #\n\x1b[1Als -la") == "touch SPOOFED #\\n\\x1b[1Als -la"


def test_a_block_keeps_its_lines_tabs_and_emoji() -> None:
    text = "def f():\n\treturn 1  # ünïcödé, 中文, עברית, 👩\u200d💻, نیم\u200cفاصله\r\n"
    assert visible_block(text) == text.replace("\r\n", "\n")
    assert visible_block("progress 50%\r100%") == "progress 50%\\r100%"


def test_one_line_shows_newlines_and_tabs() -> None:
    assert visible("a\nb\tc") == "a\\nb\\tc"
    assert visible("plain words") == "plain words"


def test_shown_twice_is_shown_once() -> None:
    once = visible_block("".join(HOSTILE.values()))
    assert visible_block(once) == once and visible(visible(once)) == visible(once)


def test_every_format_character_but_the_joiners_is_escaped() -> None:
    # the block's character class is written out by hand (building it from unicodedata
    # at import would cost `loom list` its start-up time); it must cover Python's table
    joiners = {"\u200c", "\u200d"}
    missed = [
        f"U+{code:04X}"
        for code in range(sys.maxunicode + 1)
        if unicodedata.category(chr(code)) in ("Cc", "Cf", "Cs", "Zl", "Zp")
        and chr(code) not in joiners | {"\n", "\t"}
        and visible_block(chr(code)) == chr(code)
    ]
    assert not missed


def test_json_stays_the_same_value_and_holds_no_raw_control() -> None:
    value = {"text": "".join(HOSTILE.values()), "emoji": "👩\u200d💻 中文"}
    raw = json.dumps(value, ensure_ascii=False)
    shown = json_visible(raw)
    assert json.loads(shown) == json.loads(raw)
    assert not RAW & set(shown)
    assert "中文" in shown and "\\u202e" in shown and "\\udb40\\udc41" in shown
