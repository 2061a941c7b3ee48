"""Files in a test's project."""

from __future__ import annotations

import os
from pathlib import Path


def write(root: Path, rel: str, text: str | bytes) -> Path:
    """Write `text` (or bytes) to root/rel, making its folders; returns the path."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def age(path: Path, seconds: int = 60) -> None:
    """Backdate a file so its mtime is not 'racy' (too recent to trust)."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - seconds * 1_000_000_000))
