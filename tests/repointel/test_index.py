"""The index refreshes incrementally and its on-disk cache survives damage and sharing."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
from pathlib import Path

import pytest

from loom.repointel import index as index_module
from loom.repointel.cache import cache_file_for
from loom.repointel.index import RepoIndex
from tests.support.files import age, write
from tests.support.repointel import make_index


def test_rescan_touches_only_what_changed(git_repo: Path, tmp_path: Path) -> None:
    for name in ("a.py", "b.py", "c.py"):
        age(write(git_repo, name, f"def {name[0]}_fn():\n    return 1\n"))
    index = make_index(git_repo, tmp_path / "cache")
    first = index.refresh()
    assert sorted(first.added) == ["a.py", "b.py", "c.py"] and first.parsed == 3

    unchanged = index.refresh()
    assert unchanged.parsed == 0 and not unchanged.any_change

    age(write(git_repo, "b.py", "def b_fn():\n    return 2\n\ndef b_more():\n    pass\n"))
    (git_repo / "c.py").unlink()
    age(write(git_repo, "d.py", "def d_fn():\n    pass\n"))
    after = index.refresh()
    assert after.changed == ["b.py"] and after.removed == ["c.py"] and after.added == ["d.py"]
    assert after.parsed == 2
    names = {d.name for d in index.symbols()["b.py"].definitions}
    assert names == {"b_fn", "b_more"}


def test_a_new_process_reuses_the_cache(git_repo: Path, tmp_path: Path) -> None:
    age(write(git_repo, "a.py", "def a_fn():\n    pass\n"))
    make_index(git_repo, tmp_path / "cache").refresh()
    again = make_index(git_repo, tmp_path / "cache")
    stats = again.refresh()
    assert stats.parsed == 0 and not stats.any_change
    assert [d.name for d in again.symbols()["a.py"].definitions] == ["a_fn"]


def test_same_size_rewrite_within_the_mtime_granularity_is_seen(
    git_repo: Path, tmp_path: Path
) -> None:
    path = write(git_repo, "a.py", "def aa():\n    pass\n")
    index = make_index(git_repo, tmp_path / "cache")
    index.refresh()
    st = path.stat()
    path.write_text("def bb():\n    pass\n")  # same size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # and the same mtime
    stats = index.refresh()
    assert stats.changed == ["a.py"]
    assert [d.name for d in index.symbols()["a.py"].definitions] == ["bb"]


def test_corrupt_symbol_entries_are_recomputed(git_repo: Path, tmp_path: Path) -> None:
    age(write(git_repo, "a.py", "def a_fn():\n    pass\n"))
    index = make_index(git_repo, tmp_path / "cache")
    index.refresh()
    index.close()
    db = sqlite3.connect(cache_file_for(tmp_path / "cache", git_repo.resolve()))
    db.execute("UPDATE symbols SET data = x'00ff13'")
    db.commit()
    db.close()
    fresh = make_index(git_repo, tmp_path / "cache")
    fresh.refresh()
    assert [d.name for d in fresh.symbols()["a.py"].definitions] == ["a_fn"]


def test_a_cache_file_that_is_not_a_database_is_moved_aside(git_repo: Path, tmp_path: Path) -> None:
    age(write(git_repo, "a.py", "def a_fn():\n    pass\n"))
    path = cache_file_for(tmp_path / "cache", git_repo.resolve())
    path.parent.mkdir(parents=True)
    path.write_bytes(b"this is not sqlite" * 100)
    index = make_index(git_repo, tmp_path / "cache")
    assert index.cache.problem and "rebuilt" in index.cache.problem
    index.refresh()
    assert "a.py" in index.symbols()
    assert list(path.parent.glob("*.corrupt-*"))


def test_file_deleted_between_scan_and_parse(
    git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(git_repo, "keep.py", "def keep():\n    pass\n")
    write(git_repo, "gone.py", "def gone():\n    pass\n")
    real_scan = index_module.scan_project

    def scan_then_delete(*args, **kwargs):
        result = real_scan(*args, **kwargs)
        (git_repo / "gone.py").unlink()
        return result

    monkeypatch.setattr(index_module, "scan_project", scan_then_delete)
    index = make_index(git_repo, tmp_path / "cache")
    stats = index.refresh()
    assert stats.added == ["keep.py"] and "gone.py" in stats.removed
    assert set(index.symbols()) == {"keep.py"}


def test_cold_parse_over_a_process_pool_matches_serial(
    git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(30):
        write(git_repo, f"pkg/m{n}.py", f"def f{n}():\n    return f{(n + 1) % 30}()\n")
    monkeypatch.setattr(index_module, "POOL_THRESHOLD", 10)
    monkeypatch.setattr(index_module, "CHUNK", 7)
    pooled = make_index(git_repo, tmp_path / "pooled", workers=2)
    pooled.refresh()
    serial = make_index(git_repo, tmp_path / "serial", workers=1)
    serial.refresh()
    assert pooled.symbols() == serial.symbols()
    assert len(pooled.symbols()) == 30


def _index_in_process(root: str, cache_dir: str, queue) -> None:
    index = RepoIndex(Path(root), cache_file_for(Path(cache_dir), Path(root).resolve()))
    for _ in range(3):
        index.refresh()
    queue.put(sorted(index.symbols()))


def test_concurrent_processes_share_one_cache(git_repo: Path, tmp_path: Path) -> None:
    for n in range(40):
        write(git_repo, f"m{n}.py", f"def f{n}():\n    pass\n")
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    workers = [
        context.Process(
            target=_index_in_process, args=(str(git_repo), str(tmp_path / "cache"), queue)
        )
        for _ in range(3)
    ]
    for worker in workers:
        worker.start()
    results = [queue.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join(timeout=30)
        assert worker.exitcode == 0
    expected = sorted(f"m{n}.py" for n in range(40))
    assert results == [expected] * 3


def test_unreadable_file_is_reported_once_not_reread_every_time(
    git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    age(write(git_repo, "locked.py", "def hidden():\n    pass\n"))
    age(write(git_repo, "open.py", "def seen():\n    pass\n"))
    real = index_module.read_and_extract
    calls: list[str] = []

    def deny_locked(root: str, path: str, language: str | None):
        calls.append(path)
        if path == "locked.py":
            return index_module.ParsedFile(
                path, 0, 0, "", language, None, "unreadable: Permission denied"
            )
        return real(root, path, language)

    monkeypatch.setattr(index_module, "read_and_extract", deny_locked)
    index = make_index(git_repo, tmp_path / "cache")
    first = index.refresh()
    assert "locked.py: unreadable: Permission denied" in first.problems
    assert set(index.symbols()) == {"open.py"}
    calls.clear()
    index.refresh()
    index.symbols()
    assert calls == []
