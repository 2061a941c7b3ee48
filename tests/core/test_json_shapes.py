"""JSON-like data read from a thread file is narrowed where it is read: a damaged record
hides nothing, arguments and todos of the wrong shape are refused or kept as they came."""

from __future__ import annotations

import pytest

from loom.core.branches import FIELD, hidden_indexes, set_aside, side_branches
from loom.core.jsonish import is_json_list, is_json_object
from loom.core.messages import UserMessage
from loom.core.secrets import redact_value
from loom.core.text import clean_json
from loom.core.thread import Thread
from loom.core.todos import TodoError, parse_todos


def test_the_guards_say_what_json_holds() -> None:
    assert is_json_object({"a": 1}) and not is_json_object([1]) and not is_json_object("{}")
    assert is_json_list([]) and not is_json_list((1,)) and not is_json_list({"a": 1})


def test_damaged_side_branch_records_hide_nothing() -> None:
    thread = Thread.new()
    for n in range(6):
        thread.append(UserMessage(content=f"m{n}"))
    records: list[object] = [
        "not a record",
        ["start", 0],
        {"start": None, "end": 2},
        {"end": 3},
        {"start": "x", "end": 4},
        {"start": "1", "end": 2.0},  # what int() reads: hides message 1
        {"start": 4, "end": 5},
    ]
    setattr(thread, FIELD, records)  # as a thread file read back holds them
    assert hidden_indexes(thread) == {1, 4}
    assert len(side_branches(thread)) == 7  # kept as they came
    branch = set_aside(thread, 5)
    assert branch is not None and branch["start"] == 5
    assert hidden_indexes(thread) == {1, 4, 5} and len(side_branches(thread)) == 8


def test_nested_values_are_walked_and_other_values_kept() -> None:
    secrets = {"KEY": "sk-12345678"}
    value = {"cmd": ["echo", "sk-12345678"], "n": 3, "nested": {"k": "x sk-12345678"}}
    assert redact_value(value, secrets) == {
        "cmd": ["echo", "[redacted:KEY]"],
        "n": 3,
        "nested": {"k": "x [redacted:KEY]"},
    }
    assert clean_json({"a\ud83d": ["\ud83d", 1, None]}) == {"a\ufffd": ["\ufffd", 1, None]}


@pytest.mark.parametrize("raw", [{"content": "x"}, "nope", '{"content": "x"}', [["x"]]])
def test_todos_of_the_wrong_shape_are_refused(raw: object) -> None:
    with pytest.raises(TodoError):
        parse_todos(raw)
