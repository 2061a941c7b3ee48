"""Reading the providers' streamed events as the JSON their APIs document.

The adapters take each SSE event as the SDK decoded it (`json.loads`, error events
already raised as the SDK's errors) and read the fields they need from it, instead of
having the SDK build a model object per chunk: at a few hundred chunks per answer and
twenty sessions streaming, building those objects was most of the event loop's work.
A field of the wrong type reads as absent, never as a crash.
"""

from __future__ import annotations

from typing import Any

from loom.core.jsonish import is_json_list, is_json_object


def obj(value: object) -> dict[str, Any]:
    """`value` if it is a JSON object, else an empty one."""
    return value if is_json_object(value) else {}


def objs(value: object) -> list[dict[str, Any]]:
    """The JSON objects in `value` if it is an array, else none."""
    return [item for item in value if is_json_object(item)] if is_json_list(value) else []


def text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def count(value: Any) -> int:
    """A token count: an integer, else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
