"""Loom's one git runner (loom._gitsafe) and the calls built on it (checkpoints, the
changes view), against hostile repositories, environments and values: real git, and a
marker file outside the project that nothing may create."""

from __future__ import annotations

from pathlib import Path

import pytest

from loom._gitsafe import checked_sha, is_sha, run_git
from loom.checkpoints import CheckpointError, CheckpointStore
from loom.gitdiff import changes_since
from tests.support.git import git, make_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    return make_repo(root)


@pytest.fixture
def mark(tmp_path: Path) -> Path:
    home = tmp_path / "home"  # outside the project
    home.mkdir()
    return home / "PWNED"


def test_values_from_files_must_be_commit_ids() -> None:
    assert is_sha("a1b2c3d4") and is_sha("0" * 40) and is_sha("A" * 64)
    for bad in ("--output=/x", "HEAD", "a1b2c3d4^{tree}", "abc", "a" * 65, "", None, 7):
        assert not is_sha(bad)
    with pytest.raises(ValueError, match="starting commit is not a commit id"):
        checked_sha("--output=/x", "starting commit")


def test_git_env_from_looms_environment_cannot_redirect_the_repository(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "elsewhere")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.fsmonitor")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "touch PWNED; false")
    done = run_git(repo, "symbolic-ref", "--short", "HEAD")
    assert done.stdout.decode().strip() == "main"
    run_git(repo, "status")
    assert not (repo / "PWNED").exists()


def test_hooks_and_fsmonitor_never_run_even_on_write_calls(repo: Path, mark: Path) -> None:
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\ntouch {mark}\n")
    hook.chmod(0o755)
    git(repo, "config", "core.fsmonitor", f"touch {mark}; false")
    (repo / "a.txt").write_text("two\n")
    run_git(repo, "add", "a.txt", read_only=False)
    done = run_git(repo, "commit", "-qm", "second", read_only=False)
    assert done.returncode == 0, done.stderr
    assert not mark.exists()


def test_a_filter_defined_in_the_work_tree_does_not_run_on_add(repo: Path, mark: Path) -> None:
    """A config include that points into the work tree is a file the agent can write:
    its clean filter must not run, even on a write call (which keeps the person's own)."""
    (repo / "team.gitconfig").write_text(f'[filter "x"]\n\tclean = touch {mark}; cat\n')
    git(repo, "config", "include.path", "../team.gitconfig")
    (repo / ".gitattributes").write_text("* filter=x\n")
    (repo / "a.txt").write_text("three\n")
    done = run_git(repo, "add", "a.txt", read_only=False)
    assert done.returncode == 0, done.stderr
    assert not mark.exists()


def test_checkpoint_store_ignores_a_planted_fsmonitor_in_its_own_config(
    repo: Path, tmp_path: Path, mark: Path
) -> None:
    store = CheckpointStore(repo, tmp_path / "store")
    store.snapshot("first")
    config = store.git_dir / "config"
    config.write_text(config.read_text() + f"[core]\n\tfsmonitor = touch {mark}; false\n")
    hooks = store.git_dir / "hooks"
    hooks.mkdir(exist_ok=True)
    (repo / "a.txt").write_text("changed\n")
    store.snapshot("second")
    assert not mark.exists()


@pytest.mark.parametrize("forged", ["--output=HOME/.bashrc", "HEAD~1", "abc^{tree}"])
def test_checkpoint_ids_from_a_thread_are_checked(repo: Path, tmp_path: Path, forged: str) -> None:
    store = CheckpointStore(repo, tmp_path / "store")
    snap = store.snapshot("first")
    forged = forged.replace("HOME", str(tmp_path / "home"))
    with pytest.raises(CheckpointError, match="not a commit id"):
        store.restore(forged)
    with pytest.raises(CheckpointError, match="not a commit id"):
        store.changed_paths(snap.commit, forged)
    assert not store.exists(forged)
    assert not (tmp_path / "home").exists()


def test_changes_since_refuses_a_base_that_is_not_a_commit_id(repo: Path, mark: Path) -> None:
    found = changes_since(repo, f"--output={mark}")
    assert found.files == [] and found.problem and "not a commit id" in found.problem
    assert not mark.exists()


def test_changes_since_runs_no_diff_driver_or_textconv(repo: Path, mark: Path) -> None:
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "config", "diff.evil.textconv", f"touch {mark}; cat")
    git(repo, "config", "diff.evil.command", f"touch {mark}")
    git(repo, "config", "diff.external", f"touch {mark}")
    git(repo, "config", "core.fsmonitor", f"touch {mark}; false")
    (repo / ".gitattributes").write_text("* diff=evil\n")
    (repo / "a.txt").write_text("changed\n")
    (repo / "new.txt").write_text("new\n")
    found = changes_since(repo, base)
    assert found.problem is None
    assert {f.path for f in found.files} == {"a.txt", "new.txt", ".gitattributes"}
    assert not mark.exists()
