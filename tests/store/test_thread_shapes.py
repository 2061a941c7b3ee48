"""Threads are data: a field that Loom later hands to git or the file system is checked
for its shape when the file is read, and a file with a bad one is quarantined like any
damaged file (issue 20, route 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.threads import make_thread, plant_thread

from loom.core.shapes import is_absolute_path, is_branch_name, is_commit_id
from loom.paths import LoomPaths
from loom.store.base import ThreadUnreadable
from loom.store.local import LocalThreadStore

FIXTURES = Path(__file__).parent.parent / "fixtures" / "threads"
BAD_FIELDS = [
    {"git_initial_commit_sha": "--output=/tmp/x"},
    {"git_current_commit_sha": "HEAD~1"},
    {"git_commits": ["a1b2c3d4", "--all"]},
    {"git_branch": "-c"},
    {"git_initial_branch": "main..other"},
    {"parent_thread_id": "../../etc/passwd"},
    {"workspace_root": "relative/project"},
    {"cwd": "/home/ana/proj/../../../root"},
    {"worktree": {"name": "w", "path": "/x\n/y", "branch": "loom/w", "repo": "/r"}},
    {"worktree": {"name": "w", "path": "/x", "branch": "--orphan", "repo": "/r"}},
]


@pytest.fixture
def store() -> LocalThreadStore:
    return LocalThreadStore(LoomPaths.from_env())


@pytest.mark.parametrize("fields", BAD_FIELDS, ids=lambda f: next(iter(f)))
def test_a_field_of_the_wrong_shape_quarantines_the_thread(
    store: LocalThreadStore, fields: dict[str, object]
) -> None:
    thread_id = plant_thread(**fields)
    with pytest.raises(ThreadUnreadable) as raised:
        store.load(thread_id)
    assert next(iter(fields)) in raised.value.reason
    assert not store.path_for(thread_id).exists()
    kept = store.paths.quarantine_dir / f"{thread_id}.json"
    assert json.loads(kept.read_text())[next(iter(fields))] == next(iter(fields.values()))
    assert thread_id not in [row.id for row in store.list()]


def test_listing_quarantines_a_planted_thread_too(store: LocalThreadStore) -> None:
    thread_id = plant_thread(git_initial_commit_sha="--output=/tmp/x")
    assert thread_id not in [row.id for row in store.list()]
    assert store.last_scan.quarantined and not store.path_for(thread_id).exists()


def test_well_shaped_values_load(store: LocalThreadStore) -> None:
    thread = make_thread(
        git_initial_commit_sha="a1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
        git_current_commit_sha="0fedcba9",
        git_commits=["a1b2c3d4e5f60718293a4b5c6d7e8f9012345678", "0fedcba9"],
        git_branch="feature/login-v2.1",
        git_initial_branch="main",
        parent_thread_id=make_thread().id,
        cwd="/home/ana/proj/src",
        worktree={"name": "w", "path": "/data/wt/w", "branch": "loom/w", "repo": "/home/ana/proj"},
    )
    store.save(thread)
    loaded = store.load(thread.id)
    assert loaded is not None and loaded.git_branch == "feature/login-v2.1"
    for name in ("schema_v1.json", "schema_v2.json"):  # files older Looms wrote still load
        data = json.loads((FIXTURES / name).read_text())
        store.threads_dir.joinpath(f"{data['id']}.json").write_text(json.dumps(data))
        assert store.load(data["id"]) is not None


def test_shape_checks() -> None:
    assert is_commit_id("a1b2") and not is_commit_id("--output=x") and not is_commit_id("HEAD")
    for good in ("main", "feature/x", "loom/w-1", "v1.2", "ünïcode"):
        assert is_branch_name(good), good
    for bad in ("-b", "a..b", "a b", "x.lock", "a/.b", "end/", "end.", "@", "a@{1}", "a~1", ""):
        assert not is_branch_name(bad), bad
    assert is_absolute_path("/home/a/b") and not is_absolute_path("a/b")
    assert not is_absolute_path("/a/../b") and not is_absolute_path("/a\x00b")
