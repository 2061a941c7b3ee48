"""Check a model's tool arguments against the tool's JSON schema (the subset tools use:
object with typed properties, required, enum, minimum/maximum, array items). Arguments
the schema does not name are refused unless it says `"additionalProperties": true`.

Every problem becomes a `ToolError` that ends with how to call the tool right.
"""

from __future__ import annotations

from typing import Any

from loom.tools.base import ToolError

_TYPE_NAMES = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "array": list,
    "object": dict,
}


def usage(tool_name: str, schema: dict[str, Any]) -> str:
    """`file_read(path: string (required), offset: integer, limit: integer)`."""
    required = set(schema.get("required", ()))
    parts = []
    for name, spec in schema.get("properties", {}).items():
        kind = spec.get("type", "any")
        if "enum" in spec:
            kind = " | ".join(repr(v) for v in spec["enum"])
        parts.append(f"{name}: {kind}{' (required)' if name in required else ''}")
    return f"{tool_name}({', '.join(parts)})"


def _type_ok(value: Any, kind: str | None) -> bool:
    if kind is None:
        return True
    expected = _TYPE_NAMES.get(kind)
    if expected is None:
        return True
    if kind in ("integer", "number") and isinstance(value, bool):
        return False
    if kind == "integer" and isinstance(value, float) and value.is_integer():
        return True
    return isinstance(value, expected)


def _check_value(name: str, value: Any, spec: dict[str, Any]) -> Any:
    kind = spec.get("type")
    if not _type_ok(value, kind):
        got = type(value).__name__ if value is not None else "null"
        raise ValueError(f"argument {name!r} must be a {kind}, got {got} {value!r:.60}")
    if kind == "integer":
        value = int(value)
    if "enum" in spec and value not in spec["enum"]:
        raise ValueError(f"argument {name!r} must be one of {spec['enum']}, got {value!r:.60}")
    if "minimum" in spec and value < spec["minimum"]:
        raise ValueError(f"argument {name!r} must be at least {spec['minimum']}, got {value}")
    if "maximum" in spec and value > spec["maximum"]:
        raise ValueError(f"argument {name!r} must be at most {spec['maximum']}, got {value}")
    if kind == "string" and spec.get("minLength") and len(value) < spec["minLength"]:
        raise ValueError(f"argument {name!r} must not be empty")
    if kind == "array" and "items" in spec:
        value = [_check_value(f"{name}[{i}]", item, spec["items"]) for i, item in enumerate(value)]
    return value


def validate_args(tool_name: str, schema: dict[str, Any], args: Any) -> dict[str, Any]:
    """The arguments with defaults filled in, or a ToolError that explains the call."""
    how = f"Call it as {usage(tool_name, schema)}."
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise ToolError(f"{tool_name} takes a JSON object of arguments, got {args!r:.80}. {how}")
    properties: dict[str, Any] = schema.get("properties", {})
    unknown = sorted(set(args) - set(properties))
    if unknown and schema.get("additionalProperties", False) is not True:
        raise ToolError(f"{tool_name} has no argument {', '.join(map(repr, unknown))}. {how}")
    missing = [name for name in schema.get("required", ()) if args.get(name) is None]
    if missing:
        raise ToolError(f"{tool_name} needs the argument {', '.join(map(repr, missing))}. {how}")
    clean: dict[str, Any] = {}
    for name, spec in properties.items():
        if args.get(name) is None:
            if "default" in spec:
                clean[name] = spec["default"]
            continue
        try:
            clean[name] = _check_value(name, args[name], spec)
        except ValueError as exc:
            raise ToolError(f"{tool_name}: {exc}. {how}") from None
    return clean
