"""A snapshot of a workspace's git state, recorded on a thread (seed 002).

`snapshot_git_state(thread, workspace)` sets the initial branch/commit/dirty flag once,
the current branch/commit/dirty flag every time, appends the head commit to
`git_commits` without duplicates, and records the remote as `host/owner/repo` with any
credentials stripped. Outside a repository, or without git installed, it does nothing.

Cost: one `git status --porcelain=v2 --branch` call, plus one `git config` call the
first time (to read the remote URL).
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loom import _gitsafe

GIT_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class RepoStatus:
    branch: str | None
    head_sha: str | None
    is_dirty: bool


def snapshot_git_state(thread: Any, workspace: Path) -> None:
    """Record the git state of `workspace` on `thread` (see module docstring)."""
    status = detect_repo_status(workspace)
    if status is None:
        return
    if thread.git_initial_branch is None and thread.git_initial_commit_sha is None:
        thread.git_initial_branch = status.branch
        thread.git_initial_commit_sha = status.head_sha
        thread.git_start_dirty = status.is_dirty
    thread.git_branch = status.branch
    thread.git_current_commit_sha = status.head_sha
    thread.git_end_dirty = status.is_dirty
    if status.head_sha and status.head_sha not in thread.git_commits:
        thread.git_commits.append(status.head_sha)
    if thread.git_remote_url is None:
        thread.git_remote_url = detect_remote_slug(workspace)


def detect_repo_status(workspace: Path) -> RepoStatus | None:
    """Branch, head commit and dirty flag; None outside a repo or without git."""
    out = run_git(workspace, "status", "--porcelain=v2", "--branch", "--untracked-files=normal")
    if out is None:
        return None
    branch: str | None = None
    sha: str | None = None
    dirty = False
    for line in out.splitlines():
        if line.startswith("# branch.oid "):
            value = line[len("# branch.oid ") :].strip()
            sha = None if value == "(initial)" else value
        elif line.startswith("# branch.head "):
            value = line[len("# branch.head ") :].strip()
            branch = None if value == "(detached)" else value
        elif line and not line.startswith("#"):
            dirty = True
    return RepoStatus(branch=branch, head_sha=sha, is_dirty=dirty)


def detect_remote_slug(workspace: Path) -> str | None:
    """The normalised URL of `origin` (or else the first remote), if any."""
    out = run_git(workspace, "config", "--get-regexp", r"^remote\..*\.url$")
    if not out:
        return None
    remotes: dict[str, str] = {}
    for line in out.splitlines():
        key, _, url = line.partition(" ")
        name = key[len("remote.") : -len(".url")]
        remotes.setdefault(name, url.strip())
    url = remotes.get("origin") or next(iter(remotes.values()), None)
    return normalize_remote_url(url) if url else None


_SCP_LIKE = re.compile(r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?!//)(?P<path>.+)$")


def normalize_remote_url(url: str) -> str:
    """`git@github.com:o/r.git`, `https://user:tok@github.com/o/r` -> `github.com/o/r`.

    Credentials, ports, schemes and a trailing `.git` are dropped. Local paths keep
    their path (without `file://`).
    """
    url = url.strip()
    if "://" in url:
        scheme, _, rest = url.partition("://")
        if scheme == "file":
            return _strip_git_suffix(rest.rstrip("/"))
        authority, _, path = rest.partition("/")
        host = authority.rsplit("@", 1)[-1]  # drop user:password@
        # drop :port (an IPv6 literal keeps its brackets)
        host = host[: host.find("]") + 1] if host.startswith("[") else host.split(":", 1)[0]
        return _strip_git_suffix(f"{host.lower()}/{path.strip('/')}".rstrip("/"))
    match = _SCP_LIKE.match(url)
    if match and not os.path.isabs(url):
        return _strip_git_suffix(f"{match['host'].lower()}/{match['path'].strip('/')}")
    return _strip_git_suffix(url.rstrip("/"))


def _strip_git_suffix(text: str) -> str:
    return text[:-4] if text.endswith(".git") else text


def run_git(workspace: Path, *args: str) -> str | None:
    """Run a read-only git command in `workspace`, hardened (the repository's config runs
    nothing, see loom._gitsafe); its stdout, or None when git is missing, fails or this
    is not a repository."""
    try:
        done = _gitsafe.run_git(workspace, *args, timeout=GIT_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "replace")
