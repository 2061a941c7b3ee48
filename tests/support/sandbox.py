"""The sandbox in tests: skip (or fail, in CI) where this machine has none, and the
folders a sandboxed run is checked against."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest


def require_sandbox() -> None:
    """Skip where this machine has no sandbox, except in CI, where that is a failure."""
    from loom.sandbox import detect

    detection = detect()
    if detection.backend is None:
        if os.environ.get("CI"):
            pytest.fail(f"no sandbox in CI: {detection.problem}")
        pytest.skip(f"no sandbox here: {detection.problem}")


@dataclass
class Layout:
    project: Path
    outside: Path  # not writable in the sandbox
    systmp: Path  # the loom process's TMPDIR, so the writable system temp
    loom_home: Path
