"""Text that can always be saved, and text shown on a terminal only as text.

Saving: lone surrogates are repaired where text enters Loom.

A model or a tool can hand us half of a UTF-16 surrogate pair (`"\\ud83d"`, half an
emoji, e.g. from a stream cut between two chunks). Python strings hold it, but no UTF-8
encoder will write it, so every later save of the thread would fail. `clean_text`
replaces each lone surrogate with U+FFFD (a valid pair is joined into its character);
`clean_json` does the same through a JSON value and refuses absurd nesting, which
neither our file format (orjson: 255 levels) nor pydantic (200) can read back.
"""

from __future__ import annotations

import re

from loom.core.jsonish import is_json_list, is_json_object

REPLACEMENT = "\ufffd"
MAX_JSON_DEPTH = 64
"""Deepest nesting accepted inside a tool call's arguments (the thread file adds ~8)."""


class TooDeep(ValueError):
    pass


def clean_text(text: str) -> str:
    """`text` with lone surrogates replaced (the same object when there are none)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def clean_json(value: object, depth: int = 0) -> object:
    """A JSON value with its strings (keys too) cleaned; TooDeep past MAX_JSON_DEPTH."""
    if isinstance(value, str):
        return clean_text(value)
    if depth >= MAX_JSON_DEPTH and isinstance(value, dict | list):
        raise TooDeep(f"nested more than {MAX_JSON_DEPTH} levels deep")
    if is_json_object(value):
        return {clean_text(str(k)): clean_json(v, depth + 1) for k, v in value.items()}
    if is_json_list(value):
        return [clean_json(v, depth + 1) for v in value]
    return value


# -- text shown on a terminal ---------------------------------------------------------
#
# A terminal acts on some characters instead of showing them: ESC and the C0/C1 controls
# start escape sequences (CSI cursor moves and erases, OSC 52 clipboard writes, OSC 8
# links, OSC 0 titles, DCS/APC/PM/SOS strings), a carriage return rewinds the line, bidi
# controls reorder what follows, zero-width and tag characters hide text. Every print of
# text that came from a model, a tool, a file, a repository or a thread goes through
# `visible` (one line: a name, a command, a title) or `visible_block` (a multi-line
# block: an answer, a tool's output), which write each such character as its escape
# (`\x1b`, `\r`, `\u202e`), so the person sees it and the terminal never acts on it.
# `json_visible` does the same for JSON text (a valid JSON escape, the same data).

_BLOCK_ESCAPES = (
    "[\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 but tab and newline, DEL, C1 (0x9b is a CSI)
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"  # format characters
    "\u200b\u200e\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb"  # (bidi, zero-width)
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e007f"  # tag characters: text no one sees
    "\ud800-\udfff]"  # a lone surrogate
)
"""What `visible_block` escapes: every control and format character but the tab, the
newline and the two joiners (U+200C, U+200D: emoji sequences, Persian and Indic text)."""
_compiled: dict[str, re.Pattern[str]] = {}


_CONTROLS = "[\x00-\x08\x0b-\x1f\x7f-\x9f]"


def _pattern(key: str = "block") -> re.Pattern[str]:
    """Compiled on first use (`loom list` starts faster without it)."""
    if key not in _compiled:
        source = {
            "block": _BLOCK_ESCAPES,
            "json": _BLOCK_ESCAPES.replace("\x00-\x08\x0b-\x1f", ""),  # JSON's own: \\u001b
            "controls": _CONTROLS,
        }[key]
        _compiled[key] = re.compile(source)
    return _compiled[key]


def _escape(ch: str) -> str:
    return ch.encode("unicode_escape", "backslashreplace").decode("ascii")


def visible(text: str) -> str:
    """One line of `text` as a terminal must show it: every character that is not
    printable (controls, escape sequences, newlines, tabs, bidi and zero-width
    characters, spaces other than the plain one) written as its escape (`\\x1b`, `\\n`,
    `\\u202e`), so nothing can erase, reorder or fake what is shown beside it."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else _escape(ch) for ch in text)


def visible_block(text: str, *, controls_only: bool = False) -> str:
    """A multi-line block of `text` as a terminal must show it: newlines and tabs stay
    (a CRLF line end is a newline), every other control, bidi, zero-width or tag
    character is written as its escape (`\\x1b`, `\\r`, `\\u202e`). `controls_only`:
    only the C0 and C1 controls (text a model reads, such as a web page, keeps its soft
    hyphens and bidi marks; a terminal printing it escapes them then)."""
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    if text.replace("\n", "").replace("\t", "").isprintable():  # the usual case, at C speed
        return text
    pattern = _pattern("controls" if controls_only else "block")
    return pattern.sub(lambda found: _escape(found.group()), text)


def json_visible(json_text: str) -> str:
    """JSON text (from `json.dumps(..., ensure_ascii=False)`, which leaves DEL, the C1
    controls and bidi characters raw) with those written as `\\u` escapes: the same JSON
    value, safe to print on a terminal."""
    return _pattern("json").sub(lambda found: _json_escape(found.group()), json_text)


def _json_escape(ch: str) -> str:
    code = ord(ch)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
