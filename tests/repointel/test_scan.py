"""The file index follows git's ignore rules; real git is the oracle."""

from __future__ import annotations

import os
from pathlib import Path

from loom.ignore import IgnoreRules
from loom.repointel.scan import scan_project
from tests.support.files import write
from tests.support.git import git_visible


def test_nested_gitignores_negations_and_info_exclude_match_git(git_repo: Path) -> None:
    root = git_repo
    write(root, ".gitignore", "*.log\nbuild/\n!important.log\n/secret.txt\n")
    write(root, "app.py", "x = 1\n")
    write(root, "debug.log", "noise")
    write(root, "important.log", "keep me")
    write(root, "secret.txt", "s")
    write(root, "build/out.py", "y = 2\n")
    write(root, "pkg/secret.txt", "not anchored here, so kept")
    write(root, "pkg/.gitignore", "*.tmp\n!keep.tmp\ngenerated/\n")
    write(root, "pkg/a.tmp", "t")
    write(root, "pkg/keep.tmp", "t")
    write(root, "pkg/generated/x.py", "z = 3\n")
    write(root, "pkg/sub/.gitignore", "!*.log\n")  # re-includes logs below pkg/sub
    write(root, "pkg/sub/trace.log", "l")
    write(root, "pkg/sub/mod.py", "def f():\n    pass\n")
    write(root, ".git/info/exclude", "local-notes.md\n")
    write(root, "local-notes.md", "mine")

    scanned = set(scan_project(str(root), ignore=()).files)

    assert scanned == git_visible(root)
    assert "important.log" in scanned and "pkg/sub/trace.log" in scanned
    assert "debug.log" not in scanned and "local-notes.md" not in scanned


def test_config_ignore_list_and_default_ignores(git_repo: Path) -> None:
    write(git_repo, "src/app.py", "x = 1\n")
    write(git_repo, "fixtures/big.json", "{}")
    write(git_repo, "node_modules/lib/index.js", "module.exports = 1\n")
    rules = ("node_modules/", "fixtures/")
    files = set(scan_project(str(git_repo), ignore=rules).files)
    assert files == {"src/app.py"}


def test_language_size_and_mtime_are_recorded(git_repo: Path) -> None:
    path = write(git_repo, "main.go", "package main\n")
    write(git_repo, "notes.txt", "hello")
    scan = scan_project(str(git_repo))
    entry = scan.files["main.go"]
    assert entry.language == "go"
    assert entry.size == path.stat().st_size
    assert entry.mtime_ns == path.stat().st_mtime_ns
    assert scan.files["notes.txt"].language is None


def test_oversized_files_are_left_out_and_reported(git_repo: Path) -> None:
    write(git_repo, "small.py", "x = 1\n")
    write(git_repo, "huge.py", "x = 1\n" * 1000)
    scan = scan_project(str(git_repo), max_file_bytes=1000)
    assert set(scan.files) == {"small.py"}
    assert scan.too_large == ["huge.py"]


def test_symlink_loops_and_dangling_links_do_not_hang_or_crash(git_repo: Path) -> None:
    write(git_repo, "pkg/mod.py", "x = 1\n")
    os.symlink("..", git_repo / "pkg" / "up")  # a loop through the parent
    os.symlink("loop_b", git_repo / "loop_a")
    os.symlink("loop_a", git_repo / "loop_b")  # ELOOP
    os.symlink("missing.py", git_repo / "dangling.py")
    os.symlink("pkg/mod.py", git_repo / "alias.py")  # a link to a file is a file
    files = set(scan_project(str(git_repo)).files)
    assert files == {"pkg/mod.py", "alias.py"}


def test_path_is_ignored_checks_parent_directories(git_repo: Path) -> None:
    write(git_repo, ".gitignore", "build/\n")
    write(git_repo, "pkg/.gitignore", "*.gen.py\n")
    rules = IgnoreRules(str(git_repo), ())
    assert rules.path_is_ignored("build/deep/x.py")
    assert rules.path_is_ignored("pkg/a.gen.py")
    assert not rules.path_is_ignored("pkg/a.py")
    assert rules.path_is_ignored(".git/config")
