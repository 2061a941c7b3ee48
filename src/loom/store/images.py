"""The image store: each image a person attached (or the agent read) kept once, by its
SHA-256, under `$XDG_DATA_HOME/loom/images/`. Thread files hold only references
(`loom.core.images.ImageRef`), so a thread with screenshots stays small and syncs as
text; the store is read back when a resumed thread is sent to a model again.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from loom.core.images import EXTENSIONS, ImageRef
from loom.store.atomic import atomic_write_bytes

_SHA256 = re.compile(r"[0-9a-f]{64}")


class ImageStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    def path_of(self, ref: ImageRef) -> Path:
        """Where `ref`'s bytes live; ValueError for a hash that is not 64 hex digits (a
        forged thread file's "../.." must not name a file elsewhere)."""
        if not _SHA256.fullmatch(ref.sha256):
            raise ValueError(f"{ref.name}: {ref.sha256[:80]!r} is not a SHA-256")
        ext = EXTENSIONS.get(ref.media_type, "bin")
        return self.root / ref.sha256[:2] / f"{ref.sha256}.{ext}"

    def put(self, ref: ImageRef) -> None:
        """Keep `ref`'s bytes (once per content)."""
        if ref.data is None:
            raise ValueError(f"{ref.name}: no image data to store")
        path = self.path_of(ref)
        if path.exists():
            return
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        atomic_write_bytes(path, ref.data)

    def load(self, ref: ImageRef) -> bool:
        """Attach the stored bytes to `ref`; False when they are gone or do not match."""
        if ref.data is not None:
            return True
        try:
            data = self.path_of(ref).read_bytes()
            ref.with_data(data)
        except (OSError, ValueError):
            return False
        return True


def image_store(data_dir: str | os.PathLike[str]) -> ImageStore:
    return ImageStore(Path(data_dir) / "images")
