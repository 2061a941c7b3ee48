"""Reading a field a model may not have: the ones helpers keep on a thread beyond its
schema (compactions, checkpoints, side branches: the thread's models keep unknown
fields, `extra="allow"`), or one that only some kinds of message have."""

from __future__ import annotations

from typing import Any

from loom.core.jsonish import is_json_object


def extra_field(model: object, name: str) -> Any:
    """`getattr(model, name, None)`, read where pydantic keeps the field, without the
    AttributeError (~5 us) that `getattr` costs when the model has none (most threads:
    the compaction view asks on every model call; every message entering a thread)."""
    extra: object = getattr(model, "__pydantic_extra__", False)
    if extra is False:  # not a pydantic model
        return getattr(model, name, None)
    values: dict[str, Any] = model.__dict__
    if name in values:
        return values[name]
    return extra.get(name) if is_json_object(extra) else None
