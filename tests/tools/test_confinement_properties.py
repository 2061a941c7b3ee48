"""Property test: whatever path the model gives, a file tool either refuses it or stays
inside the project root (symlinks included)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loom.tools._paths import confine
from loom.tools.base import ToolError

SEGMENTS = st.sampled_from(["..", ".", "a", "b", "in_link", "out_link", "dangling", "", "~"])


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("conf")
    root, outside = base / "root", base / "outside"
    (root / "a" / "b").mkdir(parents=True)
    outside.mkdir()
    os.symlink(root / "a", root / "a" / "in_link")
    os.symlink(outside, root / "a" / "out_link")
    os.symlink(outside / "nothing", root / "dangling")
    return root, outside


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(parts=st.lists(SEGMENTS, min_size=1, max_size=6), absolute=st.booleans())
def test_confine_stays_inside(layout: tuple[Path, Path], parts: list[str], absolute: bool) -> None:
    root, _ = layout
    raw = "/".join(parts)
    if absolute:
        raw = str(root) + "/" + raw
    try:
        resolved, rel = confine(root, raw)
    except ToolError:
        return
    real_root = os.path.realpath(root)
    assert os.path.realpath(resolved) == str(resolved)
    assert str(resolved) == real_root or str(resolved).startswith(real_root + os.sep)
    assert not rel.startswith("..") and not os.path.isabs(rel)
