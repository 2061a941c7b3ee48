"""An MCP `CallToolResult` as the text the model reads."""

from __future__ import annotations

import json
from typing import Any


def result_text(result: Any, max_chars: int) -> str:
    parts: list[str] = []
    for block in getattr(result, "content", None) or []:
        parts.append(_block_text(block))
    structured = getattr(result, "structured_content", None)
    if structured is not None and not any(parts):
        parts.append(json.dumps(structured, ensure_ascii=False, indent=1))
    text = "\n".join(part for part in parts if part) or "(the tool returned no content)"
    return truncate(text, max_chars)


def truncate(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    return (
        text[:max_chars]
        + f"\n[truncated: the result had {len(text):,} characters and only the first "
        f"{max_chars:,} are shown; ask the tool for less (a narrower query or a smaller range)]"
    )


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return block.text
    if kind in ("image", "audio"):
        size = len(getattr(block, "data", "") or "") * 3 // 4
        return f"[{kind} {getattr(block, 'mime_type', '?')}, about {size:,} bytes, not shown]"
    if kind == "resource_link":
        return f"[resource {block.uri}: {block.name}]"
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        if text is not None:
            return f"[resource {resource.uri}]\n{text}"
        size = len(getattr(resource, "blob", "") or "") * 3 // 4
        return f"[resource {resource.uri}: binary, about {size:,} bytes, not shown]"
    return f"[{kind or 'unknown'} content not shown]"
