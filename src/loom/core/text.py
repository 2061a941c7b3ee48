"""Text that can always be saved: lone surrogates repaired where text enters Loom.

A model or a tool can hand us half of a UTF-16 surrogate pair (`"\\ud83d"`, half an
emoji, e.g. from a stream cut between two chunks). Python strings hold it, but no UTF-8
encoder will write it, so every later save of the thread would fail. `clean_text`
replaces each lone surrogate with U+FFFD (a valid pair is joined into its character);
`clean_json` does the same through a JSON value and refuses absurd nesting, which
neither our file format (orjson: 255 levels) nor pydantic (200) can read back.
"""

from __future__ import annotations

from typing import Any

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


def clean_json(value: Any, depth: int = 0) -> Any:
    """A JSON value with its strings (keys too) cleaned; TooDeep past MAX_JSON_DEPTH."""
    if isinstance(value, str):
        return clean_text(value)
    if depth >= MAX_JSON_DEPTH and isinstance(value, dict | list):
        raise TooDeep(f"nested more than {MAX_JSON_DEPTH} levels deep")
    if isinstance(value, dict):
        return {clean_text(str(k)): clean_json(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [clean_json(v, depth + 1) for v in value]
    return value
