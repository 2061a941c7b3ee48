"""How a bad value in a configuration layer is named to a person: where (file and line)
and what was expected.

A file's values are checked as written (pydantic's strict mode, `loom.config`): TOML has
booleans, integers, floats, strings, arrays and tables, so `network = "true"` is a string
where a boolean belongs, an error, never quietly read as `true`. Only the environment
and the command line, which hold text alone, are converted.
"""

from __future__ import annotations

import datetime
from typing import Any

# pydantic's error type -> what the key takes, in TOML's words
_EXPECTED = {
    "bool_type": "a boolean (true or false, without quotes)",
    "int_type": "a whole number (without quotes)",
    "int_from_float": "a whole number (without quotes)",
    "float_type": "a number (without quotes)",
    "string_type": "a string (in quotes)",
    "list_type": "a list ([...])",
    "dict_type": "a table",
    "model_type": "a table",
    "model_attributes_type": "a table",
}


def what_it_is(value: Any) -> str:
    """A TOML value described by its type, the person's text quoted."""
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, datetime.date | datetime.time):
        return f"the date/time {value.isoformat()}"
    return repr(value)


def problem_text(error: Any) -> str:
    """One pydantic error (`ErrorDetails`) as "must be X, not Y" or pydantic's own
    words for a constraint (`greater than or equal to 16`, one of 'on', 'ask', 'off')."""
    expected = _EXPECTED.get(error["type"])
    got = what_it_is(error.get("input"))
    if expected is not None:
        return f"must be {expected}, not {got}"
    return f"{error['msg'].lower()} (got {got})"


def line_of(text: str, key: tuple[str, ...]) -> int:
    """Best-effort line number of `key` in TOML text: the `[section]` header, then the key."""
    if not key:  # an error about the whole file (a model-level check): its first line
        return 1
    name = key[-1]
    lines = text.splitlines()
    start = 0
    if len(key) > 1:
        for index, line in enumerate(lines):
            header = line.strip().strip("[]").strip().replace('"', "")
            if line.strip().startswith("[") and header == ".".join(key[:-1]):
                start = index + 1
                break
    for index in range(start, len(lines)):
        stripped = lines[index].strip()
        if stripped.startswith("[") and stripped.strip("[] ").replace('"', "") == ".".join(key):
            return index + 1  # the key is a table header
        for candidate in (name, ".".join(key)):
            rest = stripped[len(candidate) :].lstrip()
            if stripped.startswith(candidate) and rest.startswith("="):
                return index + 1
    return start or 1
