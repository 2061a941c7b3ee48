"""Images in a conversation: a screenshot the person attached (`@shot.png`, a pasted
path, a file dropped on the web page) or an image file the agent read.

A message holds `ImageRef`s, never the bytes: the thread file records name, media type,
size and SHA-256, and the bytes live once in Loom's image store (content-addressed,
`loom.store.images`). The bytes ride along in memory (`ImageRef.data`) while the
session sends them. Pure: no I/O here.
"""

from __future__ import annotations

import hashlib

from pydantic import BaseModel, ConfigDict, PrivateAttr

from loom.core.errors import BadInput

MAX_IMAGE_BYTES = 5_000_000  # Anthropic's limit per image; the others take more
MAX_IMAGES_PER_MESSAGE = 10
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")


class ImageError(BadInput):
    """An image cannot be attached: wrong kind, too large, too many, or the model does
    not take images. The message says which and what to do."""


class ImageRef(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str  # as the person or the tool named it: "shot.png", "docs/arch.png"
    media_type: str  # image/png, image/jpeg, image/gif, image/webp
    size: int
    sha256: str
    _data: bytes | None = PrivateAttr(default=None)

    @property
    def data(self) -> bytes | None:
        """The bytes, when loaded (from the file, or the image store)."""
        return self._data

    @classmethod
    def holding(cls, name: str, media_type: str, data: bytes) -> ImageRef:
        """A reference to `data`, with the bytes attached."""
        ref = cls(name=name, media_type=media_type, size=len(data),
                  sha256=hashlib.sha256(data).hexdigest())  # fmt: skip
        ref._data = data
        return ref

    def with_data(self, data: bytes) -> ImageRef:
        if hashlib.sha256(data).hexdigest() != self.sha256:
            raise ImageError(f"{self.name}: the stored image does not match its hash")
        self._data = data
        return self

    def describe(self) -> str:
        return f"{self.name} ({self.media_type.split('/')[-1].upper()}, {self.size:,} bytes)"


def media_type_of(head: bytes) -> str | None:
    """The image type from a file's first bytes; None when it is no image we send."""
    for magic, media_type in _MAGIC:
        if head.startswith(magic):
            return media_type
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_ref(name: str, data: bytes) -> ImageRef:
    """A reference to `data` (with the bytes attached); ImageError when it is not an
    image Loom sends, or too large."""
    media_type = media_type_of(data[:16])
    if media_type is None:
        raise ImageError(f"{name} is not a PNG, JPEG, GIF or WebP image")
    if len(data) > MAX_IMAGE_BYTES:
        raise ImageError(
            f"{name} is {len(data):,} bytes; images up to {MAX_IMAGE_BYTES:,} bytes can be "
            "sent. Crop or scale it down (or save it as JPEG) and attach it again"
        )
    return ImageRef.holding(name, media_type, data)


def check_count(count: int) -> None:
    if count > MAX_IMAGES_PER_MESSAGE:
        raise ImageError(
            f"{count} images in one message; at most {MAX_IMAGES_PER_MESSAGE} can be sent "
            "together. Send them over several messages"
        )
