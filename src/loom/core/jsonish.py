"""Narrowing JSON-like data to typed shapes where it enters: a parsed file, a model's
arguments, an SDK's untyped answer. `isinstance(value, dict)` alone leaves the keys and
values unknown to the type checker; these say what JSON holds (string keys, values still
to be checked), so the code after them checks each value it reads. Standard library only,
without `typing` at run time: `loom list` prints through `core.text`, which uses these."""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see the docstring
if TYPE_CHECKING:
    from typing_extensions import TypeIs


def is_json_object(value: object) -> TypeIs[dict[str, object]]:
    return isinstance(value, dict)


def is_json_list(value: object) -> TypeIs[list[object]]:
    return isinstance(value, list)
