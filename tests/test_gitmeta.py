from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from loom.core.thread import Thread
from loom.gitmeta import normalize_remote_url, snapshot_git_state


def git(repo: Path, *args: str) -> str:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@e",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@e",
    )
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    ).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "a.txt").write_text("one\n")
    git(tmp_path, "add", "a.txt")
    git(tmp_path, "commit", "-q", "-m", "first")
    return tmp_path


def test_initial_state_set_once_current_state_every_time(repo: Path) -> None:
    thread = Thread.new(workspace_root=str(repo))
    first = git(repo, "rev-parse", "HEAD")
    snapshot_git_state(thread, repo)
    assert thread.git_initial_branch == "main"
    assert thread.git_initial_commit_sha == first
    assert thread.git_start_dirty is False
    assert thread.git_end_dirty is False
    assert thread.git_commits == [first]

    git(repo, "checkout", "-q", "-b", "feature/auth")
    (repo / "a.txt").write_text("two\n")
    git(repo, "commit", "-q", "-am", "second")
    second = git(repo, "rev-parse", "HEAD")
    (repo / "untracked.txt").write_text("x")
    snapshot_git_state(thread, repo)
    snapshot_git_state(thread, repo)  # no duplicate commits
    assert thread.git_initial_branch == "main"
    assert thread.git_initial_commit_sha == first
    assert thread.git_start_dirty is False
    assert thread.git_branch == "feature/auth"
    assert thread.git_current_commit_sha == second
    assert thread.git_end_dirty is True
    assert thread.git_commits == [first, second]


def test_remote_is_normalised_without_credentials(repo: Path) -> None:
    git(repo, "remote", "add", "origin", "https://ana:s3cret@GitHub.com/ana/proj.git")
    thread = Thread.new()
    snapshot_git_state(thread, repo)
    assert thread.git_remote_url == "github.com/ana/proj"


def test_outside_a_repo_and_without_git_nothing_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    thread = Thread.new()
    snapshot_git_state(thread, tmp_path)
    assert thread.git_branch is None and thread.git_commits == []
    monkeypatch.setenv("PATH", str(tmp_path))  # no git binary reachable
    snapshot_git_state(thread, tmp_path)
    assert thread.git_initial_commit_sha is None


def test_empty_repo_and_detached_head(tmp_path: Path, repo: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q", "-b", "trunk")
    thread = Thread.new()
    snapshot_git_state(thread, empty)
    assert thread.git_branch == "trunk" and thread.git_current_commit_sha is None
    git(repo, "checkout", "-q", "--detach")
    other = Thread.new()
    snapshot_git_state(other, repo)
    assert other.git_branch is None
    assert other.git_current_commit_sha == git(repo, "rev-parse", "HEAD")


@pytest.mark.parametrize(
    ("url", "slug"),
    [
        ("git@github.com:ana/proj.git", "github.com/ana/proj"),
        ("ssh://git@gl.example.com:2222/group/sub/proj.git", "gl.example.com/group/sub/proj"),
        ("https://x-access-token:ghp_abc@github.com/ana/proj", "github.com/ana/proj"),
        ("http://user@host.io/o/r/", "host.io/o/r"),
        ("file:///srv/git/proj.git", "/srv/git/proj"),
        ("/srv/git/proj.git", "/srv/git/proj"),
    ],
)
def test_normalize_remote_url(url: str, slug: str) -> None:
    assert normalize_remote_url(url) == slug
