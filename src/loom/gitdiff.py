"""What changed in a project since a commit: per-file diffs of the working tree against
it, new (untracked) files included. The web Changes tab and REPL `/diff` show this.

The commit comes from a thread file (`git_initial_commit_sha`), so it is checked to be
a commit id before git sees it, and it goes after `--end-of-options`; git runs as
Loom's hardened git (`loom._gitsafe`), so no configured diff driver, textconv, pager or
fsmonitor runs while the person looks at a diff.
"""

from __future__ import annotations

import subprocess
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from loom._gitsafe import ConfiguredKey, configured_keys_now, hardened_env, is_sha, run_git

MAX_UNTRACKED_DIFFS = 200
TIMEOUT_S = 20.0
_NO_PROGRAMS = ("--no-color", "--no-ext-diff", "--no-textconv")


@dataclass(frozen=True)
class FileDiff:
    path: str
    text: str  # the unified diff of this one file

    @property
    def added(self) -> int:
        return sum(
            1 for x in self.text.splitlines() if x.startswith("+") and not x.startswith("+++")
        )

    @property
    def removed(self) -> int:
        return sum(
            1 for x in self.text.splitlines() if x.startswith("-") and not x.startswith("---")
        )


@dataclass(frozen=True)
class Changes:
    files: list[FileDiff]
    problem: str | None = None  # why there is nothing to show (no base, git failed)
    untracked_left_out: int = 0  # new files beyond `max_untracked`


class _GitFailed(Exception):
    pass


def changes_since(
    root: Path,
    base: str | None,
    *,
    max_untracked: int = MAX_UNTRACKED_DIFFS,
    only: Collection[str] | None = None,
) -> Changes:
    """Per-file diffs of the working tree in `root` against commit `base` (`only`: of
    these project-relative paths alone)."""
    if not base:
        return Changes(
            [], "no starting commit is recorded (not a git repository, or no commit yet)"
        )
    if not is_sha(base):
        return Changes([], f"the recorded starting commit {base[:40]!r} is not a commit id")
    keys = configured_keys_now(str(root), hardened_env())
    try:
        tracked = _git(root, keys, "-c", "core.quotepath=off", "diff", *_NO_PROGRAMS,
                       "--end-of-options", base, "--")  # fmt: skip
        listed = _git(root, keys, "ls-files", "--others", "--exclude-standard", "-z")
    except _GitFailed as exc:
        return Changes([], f"git diff failed: {exc}")
    files = _split(tracked)
    untracked = [p for p in listed.split("\0") if p]
    if only is not None:
        files = [f for f in files if f.path in only]
        untracked = [p for p in untracked if p in only]
    for rel in untracked[:max_untracked]:
        try:
            text = _git(root, keys, "-c", "core.quotepath=off", "diff", *_NO_PROGRAMS,
                        "--no-index", "--", "/dev/null", rel, ok=(0, 1))  # fmt: skip
        except _GitFailed:
            continue
        files.append(FileDiff(rel, text))
    return Changes(files, None, max(0, len(untracked) - max_untracked))


def _git(root: Path, keys: Sequence[ConfiguredKey], *args: str, ok: tuple[int, ...] = (0,)) -> str:
    try:
        done = run_git(root, *args, timeout=TIMEOUT_S, keys=keys)
    except (OSError, subprocess.SubprocessError) as exc:
        raise _GitFailed(str(exc)) from exc
    if done.returncode not in ok:
        message = done.stderr.decode("utf-8", "replace").strip()
        raise _GitFailed(message or f"git exited with {done.returncode}")
    return done.stdout.decode("utf-8", "replace")


def _split(text: str) -> list[FileDiff]:
    files: list[FileDiff] = []
    current: list[str] = []
    for line in text.splitlines(keepends=True):
        if line.startswith("diff --git ") and current:
            files.append(_named(current))
            current = []
        current.append(line)
    if current:
        files.append(_named(current))
    return files


def _named(lines: list[str]) -> FileDiff:
    header = lines[0].rstrip("\n")
    path = header.split(" b/", 1)[-1] if " b/" in header else header
    return FileDiff(path, "".join(lines))
