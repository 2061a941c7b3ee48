"""Rescans that reuse the previous scan's directory listings: every change to the tree
still shows (real git is the oracle), and the listings are only a cache."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from loom.repointel.index import RepoIndex
from loom.repointel.scan import (
    DirCache,
    ScanResult,
    load_dir_cache,
    save_dir_cache,
    scan_project,
)
from tests.support.files import write
from tests.support.git import git, git_visible


def backdate(root: Path) -> None:
    """Age every directory and .gitignore past the racy window, as an old checkout is."""
    old = time.time_ns() - 60_000_000_000
    for folder, _dirs, files in os.walk(root):
        if "/.git" in folder + "/" and not folder.endswith("/.git/info"):
            continue
        for name in files:
            if name in (".gitignore", "exclude"):
                os.utime(os.path.join(folder, name), ns=(old, old))
        os.utime(folder, ns=(old, old))


def make_tree(root: Path) -> None:
    write(root, ".gitignore", "*.log\nbuild/\n")
    write(root, "app.py", "x = 1\n")
    write(root, "debug.log", "noise")
    write(root, "build/out.py", "y = 2\n")
    write(root, "pkg/.gitignore", "*.tmp\n")
    write(root, "pkg/mod.py", "def f():\n    pass\n")
    write(root, "pkg/a.tmp", "t")
    write(root, "pkg/sub/deep.py", "z = 3\n")
    write(root, "docs/readme.md", "hello\n")
    write(root, ".git/info/exclude", "local-notes.md\n")


def rescan(root: Path, first: ScanResult) -> ScanResult:
    again = scan_project(str(root), (), previous=first.dirs)
    full = scan_project(str(root), ())
    assert list(again.files.items()) == list(full.files.items())
    assert again.too_large == full.too_large
    assert set(again.files) == git_visible(root)
    return again


def test_an_unchanged_tree_is_not_listed_again(git_repo: Path) -> None:
    make_tree(git_repo)
    backdate(git_repo)
    first = scan_project(str(git_repo), ())
    assert first.dirs is not None and first.relisted > 0
    again = rescan(git_repo, first)
    assert again.relisted == 0


def test_a_file_edited_in_place_shows_without_listing(git_repo: Path) -> None:
    make_tree(git_repo)
    backdate(git_repo)
    first = scan_project(str(git_repo), ())
    with open(git_repo / "pkg/sub/deep.py", "a") as handle:
        handle.write("w = 4\n")  # the directory's mtime does not move
    again = rescan(git_repo, first)
    assert again.relisted == 0
    assert again.files["pkg/sub/deep.py"].size == len("z = 3\nw = 4\n")


Change = Callable[[Path], object]  # what it returns is not used
CHANGES: dict[str, Change] = {
    "new file": lambda r: write(r, "pkg/sub/new.py", "n = 1\n"),
    "deleted file": lambda r: (r / "pkg/mod.py").unlink(),
    "new directory": lambda r: write(r, "pkg/fresh/x.py", "x = 1\n"),
    "renamed directory": lambda r: os.rename(r / "pkg/sub", r / "pkg/moved"),
    "ignored file added": lambda r: write(r, "pkg/sub/b.tmp", "t"),
    "gitignore edited": lambda r: write(r, "pkg/.gitignore", "*.py\n"),
    "gitignore added below": lambda r: write(r, "pkg/sub/.gitignore", "deep.py\n"),
    "gitignore removed": lambda r: (r / "pkg/.gitignore").unlink(),
    "info/exclude edited": lambda r: write(r, ".git/info/exclude", "docs/\n"),
    "file replaced by a directory": lambda r: (
        (r / "app.py").unlink(),
        write(r, "app.py/inner.py", "i = 1\n"),
    ),
}


def test_link_targets_that_appear_show_without_listing_their_folder(git_repo: Path) -> None:
    write(git_repo, "pkg/mod.py", "x = 1\n")
    (git_repo / "elsewhere").mkdir()
    os.symlink("../elsewhere/target.py", git_repo / "pkg" / "link.py")  # dangling for now
    os.symlink("../elsewhere", git_repo / "pkg" / "dirlink")  # a directory: never followed
    backdate(git_repo)
    first = scan_project(str(git_repo), ())
    assert set(first.files) == {"pkg/mod.py"}
    write(git_repo, "elsewhere/target.py", "y = 2\n")  # pkg/ itself does not change
    second = scan_project(str(git_repo), (), previous=first.dirs)
    assert (
        second.files.keys()
        == scan_project(str(git_repo), ()).files.keys()
        == {"pkg/mod.py", "pkg/link.py", "elsewhere/target.py"}
    )
    assert second.relisted == 1  # elsewhere/ only


@pytest.mark.parametrize("change", list(CHANGES))
def test_every_kind_of_change_shows(git_repo: Path, change: str) -> None:
    make_tree(git_repo)
    backdate(git_repo)
    first = scan_project(str(git_repo), ())
    CHANGES[change](git_repo)
    again = rescan(git_repo, first)
    assert again.relisted > 0


def test_changed_ignore_settings_walk_the_whole_tree(git_repo: Path) -> None:
    make_tree(git_repo)
    backdate(git_repo)
    first = scan_project(str(git_repo), ())
    again = scan_project(str(git_repo), ("docs/",), previous=first.dirs)
    assert "docs/readme.md" not in again.files and "app.py" in again.files
    assert again.dirs is not None and again.relisted == len(again.dirs.listings)  # all of it


def test_recently_changed_directories_are_not_trusted(git_repo: Path) -> None:
    make_tree(git_repo)  # just written: inside the racy window
    first = scan_project(str(git_repo), ())
    assert first.dirs is None or "pkg" not in first.dirs.listings


@pytest.mark.parametrize("blob", [b"", b"garbage\x00\xff", b"\xe9\x00\x00"])
def test_a_corrupt_dir_cache_file_is_ignored(tmp_path: Path, blob: bytes) -> None:
    path = tmp_path / "x.dirs"
    path.write_bytes(blob)
    assert load_dir_cache(path) is None
    assert load_dir_cache(tmp_path / "missing.dirs") is None


def test_damaged_listings_fall_back_to_a_full_walk(git_repo: Path, tmp_path: Path) -> None:
    make_tree(git_repo)
    backdate(git_repo)
    first = scan_project(str(git_repo), ())
    assert first.dirs is not None
    mtime, _names, subdirs, has_gitignore = first.dirs.listings["pkg"]
    first.dirs.listings["pkg"] = (mtime, [3, None], subdirs, has_gitignore)  # type: ignore
    path = tmp_path / "x.dirs"
    save_dir_cache(path, first.dirs)
    assert load_dir_cache(path) is None  # wrong types: not loaded at all
    first.dirs.listings["pkg"] = (mtime, None, subdirs, has_gitignore)  # type: ignore
    rescan(git_repo, first)  # and if handed over anyway: a full walk


def test_the_index_keeps_listings_beside_its_cache(git_repo: Path, tmp_path: Path) -> None:
    make_tree(git_repo)
    git(git_repo, "add", "-A")
    backdate(git_repo)
    cache = tmp_path / "cache.sqlite"
    index = RepoIndex(git_repo, cache, ignore=())
    index.refresh()
    index.close()
    dirs_file = cache.with_name(cache.name + ".dirs")
    saved = load_dir_cache(dirs_file)
    assert isinstance(saved, DirCache) and "pkg/sub" in saved.listings
    write(git_repo, "pkg/sub/added.py", "def added():\n    pass\n")
    again = RepoIndex(git_repo, cache, ignore=())
    stats = again.refresh()
    assert stats.added == ["pkg/sub/added.py"]
    again.close()
    dirs_file.write_bytes(b"not a cache")  # corrupt: a full walk, not an error
    (git_repo / "app.py").unlink()
    third = RepoIndex(git_repo, cache, ignore=())
    assert third.refresh().removed == ["app.py"]
    assert isinstance(load_dir_cache(dirs_file), DirCache)  # rewritten
    third.close()


def test_an_unwritable_dir_cache_is_not_fatal(tmp_path: Path) -> None:
    target = tmp_path / "x.dirs"
    target.mkdir()
    save_dir_cache(target, DirCache((), {}, {}))
    assert load_dir_cache(target) is None
