"""Fields that helpers keep on a thread beyond its schema (compactions, checkpoints,
side branches): the thread's models keep unknown fields (`extra="allow"`)."""

from __future__ import annotations

from typing import Any


def extra_field(model: Any, name: str) -> Any:
    """`getattr(model, name, None)`, read where pydantic keeps the field, without the
    AttributeError (~5 us) that `getattr` costs when the model has none (most threads:
    the compaction view asks on every model call)."""
    extra: Any = getattr(model, "__pydantic_extra__", False)
    if extra is False:  # not a pydantic model
        return getattr(model, name, None)
    values = model.__dict__
    return values[name] if name in values else (extra or {}).get(name)
