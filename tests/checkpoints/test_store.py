"""The checkpoint store on its own: what it keeps, what it leaves out, exact restores."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from loom.checkpoints import CheckpointError, CheckpointStore
from tests.support.git import git, repo_state, tree_state


@pytest.fixture
def store(project: Path, tmp_path: Path) -> CheckpointStore:
    return CheckpointStore(project, tmp_path / "store", max_file_bytes=1000)


def test_restore_is_exact_for_bytes_modes_links_and_new_folders(
    store: CheckpointStore, project: Path
) -> None:
    (project / "link").symlink_to("app.py")
    before = store.snapshot()
    state = tree_state(project)
    (project / "app.py").write_bytes(b"\x00binary\xff")
    (project / "run.sh").chmod(0o644)
    (project / "notes.txt").unlink()
    (project / "deep" / "er").mkdir(parents=True)
    (project / "deep" / "er" / "new.py").write_text("x = 1\n")
    (project / "link").unlink()
    (project / "link").symlink_to("run.sh")
    result = store.restore(before.commit)
    assert tree_state(project) == state
    assert os.readlink(project / "link") == "app.py"
    assert not (project / "deep").exists()  # emptied folders go too
    assert set(result.paths) == {"app.py", "run.sh", "notes.txt", "deep/er/new.py", "link"}
    assert result.removed == ["deep/er/new.py"] and result.created == ["notes.txt"]


def test_ignored_and_large_files_are_left_alone(store: CheckpointStore, project: Path) -> None:
    (project / "build").mkdir()
    (project / "build" / "out.o").write_text("obj")
    (project / "__pycache__").mkdir()
    (project / "__pycache__" / "m.pyc").write_text("pyc")
    (project / "big.bin").write_bytes(b"x" * 5000)
    (project / ".git" / "info").mkdir(exist_ok=True)
    (project / ".git" / "info" / "exclude").write_text("secret.env\n")
    (project / "secret.env").write_text("KEY=1\n")
    snap = store.snapshot()
    assert snap.too_large == ("big.bin",)
    listed = store.git.text("ls-tree", "-r", "--name-only", snap.commit).splitlines()
    assert sorted(listed) == [".gitignore", "app.py", "notes.txt", "run.sh"]
    (project / "build" / "out.o").write_text("changed")
    (project / "big.bin").write_bytes(b"y" * 5000)
    store.restore(snap.commit)
    assert (project / "build" / "out.o").read_text() == "changed"
    assert (project / "big.bin").read_bytes() == b"y" * 5000


def test_a_file_that_grows_too_large_leaves_the_snapshots(
    store: CheckpointStore, project: Path
) -> None:
    store.snapshot()
    (project / "app.py").write_bytes(b"z" * 2000)
    snap = store.snapshot()
    assert "app.py" in snap.too_large
    assert "app.py" not in store.git.text("ls-tree", "--name-only", snap.commit).splitlines()


def test_unchanged_tree_reuses_the_checkpoint_and_costs_nothing(
    store: CheckpointStore, project: Path
) -> None:
    first = store.snapshot()
    assert store.snapshot().commit == first.commit
    (project / "app.py").write_text("changed\n")
    second = store.snapshot()
    assert second.commit != first.commit
    assert store.changed_paths(first.commit, second.commit) == ["app.py"]


def test_the_persons_repo_is_untouched(store: CheckpointStore, project: Path) -> None:
    (project / "app.py").write_text("dirty\n")
    git(project, "stash", "list")
    before = repo_state(project)
    status = git(project, "status", "--porcelain")
    snap = store.snapshot()
    (project / "app.py").write_text("dirtier\n")
    store.snapshot()
    store.restore(snap.commit)
    assert repo_state(project) == before
    assert git(project, "status", "--porcelain") == status
    assert not list((project / ".git" / "refs").rglob("checkpoints*"))


def test_gc_forgets_old_checkpoints(store: CheckpointStore, project: Path) -> None:
    old = store.snapshot()
    (project / "app.py").write_text("new\n")
    new = store.snapshot()
    assert store.gc(keep_days=1).removed_checkpoints == 0
    time.sleep(1.1)
    report = store.gc(keep_days=0.5 / 86400, keep=[new.commit])
    assert report.removed_checkpoints == 1 and report.kept_checkpoints == 1
    assert store.exists(new.commit) and not store.exists(old.commit)
    with pytest.raises(CheckpointError, match="no longer in the store"):
        store.restore(old.commit)


def test_a_store_path_is_per_project(tmp_path: Path) -> None:
    a = CheckpointStore.for_project(tmp_path / "a", tmp_path / "data")
    b = CheckpointStore.for_project(tmp_path / "b", tmp_path / "data")
    assert a.dir != b.dir and a.dir.parent == tmp_path / "data" / "checkpoints"


def test_auto_gc_runs_at_most_once_a_day(store: CheckpointStore, project: Path) -> None:
    import threading

    from loom.checkpoints.maintenance import STAMP, maybe_auto_gc

    store.snapshot()
    stamp = store.dir / STAMP
    old = time.time() - 2 * 86400
    stamp.write_text("x")
    os.utime(stamp, (old, old))
    maybe_auto_gc(store, keep_days=30)
    for thread in threading.enumerate():
        if thread.name == "loom-checkpoint-gc":
            thread.join(30)
    assert stamp.stat().st_mtime > old + 86400  # it ran and said when
    ran_at = stamp.stat().st_mtime
    maybe_auto_gc(store, keep_days=30)  # a day has not passed: nothing starts
    assert not any(t.name == "loom-checkpoint-gc" for t in threading.enumerate())
    assert stamp.stat().st_mtime == ran_at


def test_folders_that_became_files_or_links_keep_snapshots_and_restores_working(
    store: CheckpointStore, project: Path
) -> None:
    (project / "lib").mkdir()
    (project / "lib" / "x.py").write_text("x\n")
    (project / "deep" / "a").mkdir(parents=True)
    (project / "deep" / "a" / "b.txt").write_text("b\n")
    (project / "flat").write_text("flat\n")
    first = store.snapshot()
    before = tree_state(project)
    # git refuses "lib/x.py is beyond a symbolic link" unless the entry is removed first
    (project / "lib" / "x.py").unlink()
    (project / "lib").rmdir()
    (project / "lib").symlink_to("deep")
    (project / "deep" / "a" / "b.txt").unlink()
    (project / "deep" / "a").rmdir()
    (project / "deep" / "a").write_text("a file now\n")
    (project / "flat").unlink()
    (project / "flat").mkdir()
    (project / "flat" / "m.py").write_text("m\n")
    second = store.snapshot()
    (project / "later.txt").write_text("later\n")
    third = store.snapshot()
    assert len({first.commit, second.commit, third.commit}) == 3
    store.restore(first.commit)
    assert tree_state(project) == before and not (project / "lib").is_symlink()
    store.restore(third.commit)
    assert os.readlink(project / "lib") == "deep"
    assert (project / "deep" / "a").read_text() == "a file now\n"
    assert (project / "flat" / "m.py").read_text() == "m\n"


def test_two_first_snapshots_at_once_make_the_store_once(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A parent and its sub-agents (or parallel sub-agents) take their first checkpoint
    of one project at the same time, each with its own CheckpointStore: the store is
    made under the lock, once (two `git init --bare` at once: 'cannot mkdir ...')."""
    import threading

    from loom.checkpoints import store as store_module

    real_init = store_module._init_bare
    first_in, second_in = threading.Event(), threading.Event()
    inits: list[str] = []

    def watched_init(git_dir: Path, env: dict[str, str]) -> None:
        inits.append(threading.current_thread().name)
        if len(inits) == 1:
            first_in.set()
            second_in.wait(1.0)  # the other store's snapshot would come in now, unlocked
        else:
            second_in.set()
        real_init(git_dir, env)

    monkeypatch.setattr(store_module, "_init_bare", watched_init)
    errors: list[BaseException] = []

    def snap() -> None:
        try:
            CheckpointStore(project, tmp_path / "shared").snapshot()
        except BaseException as exc:  # reported below
            errors.append(exc)

    one = threading.Thread(target=snap, name="one")
    two = threading.Thread(target=snap, name="two")
    one.start()
    assert first_in.wait(30)
    two.start()
    one.join(30)
    two.join(30)
    assert errors == [] and inits == ["one"]
