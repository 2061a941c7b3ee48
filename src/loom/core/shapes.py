"""Shapes of the values a thread file holds that Loom later hands to git, the file
system or the sync server: commit ids, branch names, thread ids, absolute paths.

A thread file is data someone else may have written (a sandboxed command can write
files; a synced thread came from another machine), so these are checked when a file
is read (`loom.store.summary`), and a file with a value of the wrong shape is
quarantined like any damaged one: no such value ever reaches git as an option or a
revision expression, nor the file system as a path. Standard library only: this
runs on the `loom list` fast path.
"""

from __future__ import annotations

import re

from loom.core.ids import is_thread_id
from loom.core.jsonish import is_json_list, is_json_object

__all__ = [
    "is_absolute_path",
    "is_branch_name",
    "is_commit_id",
    "is_thread_id",
    "shape_problem",
]

MAX_PATH_CHARS = 4096
MAX_BRANCH_CHARS = 255

_COMMIT_ID = re.compile(r"^[0-9a-fA-F]{4,64}$")
# What `git check-ref-format --branch` refuses, as one pattern: control characters,
# space and ~^:?*[\ anywhere, "..", "@{", "//", a component starting with "." or
# ending with ".lock", a leading "-" or "/", a trailing "/" or ".".
_BAD_BRANCH = re.compile(
    r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//|(?:^|/)\.|\.lock(?:/|$)|^[-/]|[/.]$"
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def is_commit_id(value: object) -> bool:
    """A (possibly abbreviated) commit id: 4 to 64 hex digits and nothing else."""
    return isinstance(value, str) and _COMMIT_ID.match(value) is not None


def is_branch_name(value: object) -> bool:
    """A name git accepts as a branch (and never as an option): see `_BAD_BRANCH`."""
    return (
        isinstance(value, str)
        and 0 < len(value) <= MAX_BRANCH_CHARS
        and value != "@"
        and _BAD_BRANCH.search(value) is None
    )


def is_absolute_path(value: object) -> bool:
    """An absolute POSIX path without control characters or `..` components."""
    if not isinstance(value, str) or not value.startswith("/") or len(value) > MAX_PATH_CHARS:
        return False
    return _CONTROL.search(value) is None and ".." not in value.split("/")


def _is_thread_id(value: object) -> bool:
    return isinstance(value, str) and is_thread_id(value)


# field -> (check, what it must be); None is always allowed for these optional fields
_TOP_LEVEL = {
    "git_initial_commit_sha": (is_commit_id, "a commit id"),
    "git_current_commit_sha": (is_commit_id, "a commit id"),
    "git_branch": (is_branch_name, "a branch name"),
    "git_initial_branch": (is_branch_name, "a branch name"),
    "parent_thread_id": (_is_thread_id, "a thread id (T-<uuidv7>)"),
    "workspace_root": (is_absolute_path, "an absolute path"),
    "cwd": (is_absolute_path, "an absolute path"),
}
_WORKTREE = {
    "path": (is_absolute_path, "an absolute path"),
    "repo": (is_absolute_path, "an absolute path"),
    "branch": (is_branch_name, "a branch name"),
}


def shape_problem(data: dict[str, object]) -> str | None:
    """Why a parsed thread file holds a value of the wrong shape, or None when all is
    well (types are checked before this; see `loom.store.summary.extract_record`)."""
    thread_id = data.get("id")
    if not isinstance(thread_id, str) or not is_thread_id(thread_id):
        return f"the id {_shown(thread_id)} is not a thread id (T-<uuidv7>)"
    for key, (check, what) in _TOP_LEVEL.items():
        value = data.get(key)
        if value is not None and not check(value):
            return f"the field {key} is not {what}: {_shown(value)}"
    commits = data.get("git_commits")
    for value in commits if is_json_list(commits) else []:
        if not is_commit_id(value):
            return f"git_commits holds something that is not a commit id: {_shown(value)}"
    worktree = data.get("worktree")
    if is_json_object(worktree):
        for key, (check, what) in _WORKTREE.items():
            value = worktree.get(key)
            if value is not None and not check(value):
                return f"the field worktree.{key} is not {what}: {_shown(value)}"
    return None


def _shown(value: object) -> str:
    return repr(value)[:60]
