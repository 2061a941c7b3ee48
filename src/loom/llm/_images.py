"""Images as each wire format wants them (base64 in the request body). An image whose
bytes are gone from the store is sent as a one-line note instead."""

from __future__ import annotations

import base64
from typing import Any

from loom.core.images import ImageRef


def images_of(message: object) -> list[ImageRef]:
    return list(getattr(message, "images", None) or ())


def missing_note(ref: ImageRef) -> str:
    return f"[image {ref.name} ({ref.sha256[:12]}) is no longer in Loom's image store]"


def b64(ref: ImageRef) -> str | None:
    return base64.b64encode(ref.data).decode("ascii") if ref.data is not None else None


def anthropic_block(ref: ImageRef) -> dict[str, Any]:
    data = b64(ref)
    if data is None:
        return {"type": "text", "text": missing_note(ref)}
    return {"type": "image", "source": {"type": "base64", "media_type": ref.media_type,
                                        "data": data}}  # fmt: skip


def openai_part(ref: ImageRef) -> dict[str, Any]:
    data = b64(ref)
    if data is None:
        return {"type": "text", "text": missing_note(ref)}
    return {"type": "image_url", "image_url": {"url": f"data:{ref.media_type};base64,{data}"}}


def gemini_part(ref: ImageRef) -> dict[str, Any]:
    data = b64(ref)
    if data is None:
        return {"text": missing_note(ref)}
    return {"inlineData": {"mimeType": ref.media_type, "data": data}}
