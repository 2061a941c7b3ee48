"""The image store keeps bytes by their SHA-256; a thread file's reference is data from
disk (or another machine), so a forged hash never names a file outside the store."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.images import png

from loom.core.images import ImageRef, image_ref
from loom.store.images import image_store


def test_an_image_comes_back_by_its_hash(tmp_path: Path) -> None:
    store = image_store(tmp_path)
    ref = image_ref("shot.png", png(seed=3))
    store.put(ref)
    again = ImageRef.model_validate(ref.model_dump())
    assert again.data is None and store.load(again) and again.data == ref.data


def test_a_forged_hash_names_no_file_outside_the_store(tmp_path: Path) -> None:
    """Opening it at all is the harm: a FIFO there would hang the resume."""
    store = image_store(tmp_path / "data")
    forged = ImageRef(name="x.png", media_type="image/png", size=1,
                      sha256="../../../secret")  # fmt: skip
    with pytest.raises(ValueError, match="is not a SHA-256"):
        store.path_of(forged)
    assert store.load(forged) is False and forged.data is None
