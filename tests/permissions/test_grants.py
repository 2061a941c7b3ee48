from __future__ import annotations

from pathlib import Path

import pytest

from loom.permissions import GrantStore


def test_add_list_revoke(project: Path, store: GrantStore) -> None:
    first = store.add("shell", "prefix", "pytest")
    again = store.add("shell", "prefix", "pytest")
    assert again.id == first.id
    second = store.add("file_write", "dir", "src/")
    assert [g.id for g in store.list()] == [first.id, second.id]
    assert first.project_root == str(project.resolve())
    assert store.revoke(first.id) is True
    assert store.revoke(first.id) is False
    assert [g.id for g in store.list()] == [second.id]


def test_unbound_store_lists_every_project(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        GrantStore(tmp_path / name).add("shell", "prefix", "make")
    assert len(GrantStore().list()) == 2
    assert len(GrantStore(tmp_path / "a").list()) == 1
    assert GrantStore(tmp_path / "a").revoke_all() == 1
    assert GrantStore().revoke_all() == 1
    assert GrantStore().list() == []


def test_unbound_store_cannot_add() -> None:
    with pytest.raises(ValueError, match="project_root"):
        GrantStore().add("shell", "prefix", "make")


def test_bad_scope_kind(store: GrantStore) -> None:
    with pytest.raises(ValueError, match="scope kind"):
        store.add("shell", "everything", "x")  # type: ignore[arg-type]
