from __future__ import annotations

import os
from pathlib import Path

import pytest

from loom.store import atomic
from loom.store.atomic import atomic_write_parts


def test_many_parts_and_short_writes_give_the_exact_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parts = [f"piece {i};".encode() * (i % 7) for i in range(1500)]  # some empty
    target = tmp_path / "f.json"
    atomic_write_parts(target, parts)
    assert target.read_bytes() == b"".join(parts)

    real_write = os.write
    # writev that stops after 4 bytes, then writes of at most 5 bytes: the file is whole.
    monkeypatch.setattr(atomic.os, "writev", lambda fd, bufs: real_write(fd, bufs[0][:4]))
    monkeypatch.setattr(atomic.os, "write", lambda fd, buf: real_write(fd, bytes(buf[:5])))
    atomic_write_parts(target, parts[:50])
    assert target.read_bytes() == b"".join(parts[:50])
    assert [p.name for p in tmp_path.iterdir()] == ["f.json"]
