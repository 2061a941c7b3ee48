"""Images for tests: small, real files."""

from __future__ import annotations

import struct
import zlib


def png(width: int = 4, height: int = 3, seed: int = 0) -> bytes:
    """A real, valid PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(
            ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)  # fmt: skip

    rows = b"".join(b"\x00" + bytes([seed % 256, 0, 0]) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows))
            + chunk(b"IEND", b""))  # fmt: skip
