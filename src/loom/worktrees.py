"""Git worktrees for parallel work: `loom --worktree NAME`, `loom run --worktree NAME`, and
sub-agents that ask for `isolation: worktree`.

A worktree NAME of a project is a checkout of the project's current commit on a new
branch `loom/NAME`, in Loom's data folder (never inside the project, so the project's own
status, searches and repo map do not see a second copy):

    $XDG_DATA_HOME/loom/worktrees/<project>-<hash>/NAME

`ensure` creates it, or reuses it when it exists; `list_worktrees` and `remove` manage
them; `commit_work`, `diff` and `merge` carry the work done in one back to the project.
Every git call goes through the hardened runner (loom._gitsafe): the repository's
hooks (`post-checkout` runs on `git worktree add`) and configured programs never run.
Errors are LoomErrors that say what to do.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from loom import _gitsafe
from loom.core.errors import BadInput, NotFound, SetupError

BRANCH_PREFIX = "loom/"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
GIT_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Worktree:
    name: str
    path: Path
    branch: str
    repo: Path  # the project the worktree belongs to
    head: str = ""  # its commit
    missing: bool = False  # registered in git, but its folder is gone

    def as_record(self) -> dict[str, str]:
        """What a thread records about the worktree it ran in."""
        return {"name": self.name, "path": str(self.path), "branch": self.branch,
                "repo": str(self.repo)}  # fmt: skip


def _git(cwd: Path, *args: str, write: bool = False) -> subprocess.CompletedProcess[bytes]:
    try:
        return _gitsafe.run_git(cwd, *args, read_only=not write, timeout=GIT_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError) as exc:
        raise SetupError(f"git failed ({exc})", "check that git is installed and works") from exc


def _out(done: subprocess.CompletedProcess[bytes]) -> str:
    return done.stdout.decode("utf-8", "replace").strip()


def _err(done: subprocess.CompletedProcess[bytes]) -> str:
    return " ".join(done.stderr.decode("utf-8", "replace").split())[:300]


def repo_root(cwd: Path) -> Path:
    """The main working tree of the repository around `cwd` (from inside a worktree too);
    SetupError outside a git repository."""
    done = _git(cwd, "rev-parse", "--path-format=absolute", "--git-common-dir")
    if done.returncode != 0:
        raise SetupError(
            f"{cwd} is not in a git repository, and a worktree is a checkout of one",
            "run `git init` and commit first, or start Loom without --worktree",
        )
    common = Path(_out(done))
    if common.name == ".git":  # a normal repository: <root>/.git, from any worktree of it
        return common.parent
    return Path(_out(_git(cwd, "rev-parse", "--show-toplevel")))


def base_folder(repo: Path, data_dir: Path) -> Path:
    real = os.path.realpath(repo)
    key = hashlib.sha256(real.encode()).hexdigest()[:10]
    return Path(data_dir) / "worktrees" / f"{Path(real).name or 'root'}-{key}"


def check_name(repo: Path, name: str) -> str:
    """`name` when it can name a worktree folder and the branch loom/NAME; BadInput
    saying what a good name is otherwise."""
    good = "letters, digits, '.', '_' and '-', starting with a letter or digit"
    if not _NAME.match(name) or name.endswith((".lock", ".")) or ".." in name:
        raise BadInput(f"{name!r} is not a worktree name", f"use {good} (e.g. fix-login)")
    done = _git(repo, "check-ref-format", "--branch", f"{BRANCH_PREFIX}{name}")
    if done.returncode != 0:
        raise BadInput(f"{BRANCH_PREFIX}{name} is not a valid git branch name", f"use {good}")
    return name


def list_worktrees(cwd: Path, data_dir: Path) -> list[Worktree]:
    """Loom's worktrees of the project around `cwd` (git's list, those in Loom's folder)."""
    repo = repo_root(cwd)
    base = base_folder(repo, data_dir)
    found: list[Worktree] = []
    for entry in _porcelain(repo):
        path = Path(entry.get("worktree", ""))
        if path.parent != base:
            continue
        branch = entry.get("branch", "").removeprefix("refs/heads/")
        found.append(Worktree(path.name, path, branch, repo, entry.get("HEAD", ""),
                              missing="prunable" in entry or not path.is_dir()))  # fmt: skip
    return found


def _porcelain(repo: Path) -> list[dict[str, str]]:
    done = _git(repo, "worktree", "list", "--porcelain")
    entries: list[dict[str, str]] = []
    for block in _out(done).split("\n\n"):
        entry: dict[str, str] = {}
        for line in block.splitlines():
            key, _, value = line.partition(" ")
            entry[key] = value
        if entry:
            entries.append(entry)
    return entries


def ensure(cwd: Path, name: str, data_dir: Path) -> tuple[Worktree, bool]:
    """The worktree NAME of the project around `cwd`: reused when it exists, else made
    on a new branch loom/NAME from the current commit of `cwd` (a worktree's own when
    `cwd` is one). (worktree, created)."""
    repo = repo_root(cwd)
    check_name(repo, name)
    for existing in list_worktrees(repo, data_dir):
        if existing.name == name:
            if existing.missing:
                raise SetupError(
                    f"worktree {name!r} is registered but its folder {existing.path} is gone",
                    f"run `loom worktree remove {name}` and start again",
                )
            return existing, False
    path = base_folder(repo, data_dir) / name
    branch = f"{BRANCH_PREFIX}{name}"
    if path.exists():
        raise SetupError(
            f"{path} exists but is not a worktree of {repo}",
            "move it away, or pick another name",
        )
    if _git(repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}").returncode == 0:
        raise SetupError(
            f"a branch {branch} already exists, and no Loom worktree has it checked out",
            f"pick another name, or delete the branch (git branch -D {branch})",
        )
    if _git(cwd, "rev-parse", "--verify", "--quiet", "HEAD").returncode != 0:
        raise SetupError(f"{repo} has no commit yet", "commit something first")
    path.parent.mkdir(parents=True, exist_ok=True)
    done = _git(cwd, "worktree", "add", "-b", branch, "--end-of-options", str(path), "HEAD",
                write=True)  # fmt: skip
    if done.returncode != 0:
        raise SetupError(f"git could not add the worktree {name!r}: {_err(done)}")
    head = _out(_git(path, "rev-parse", "HEAD"))
    return Worktree(name, path, branch, repo, head), True


def changed(worktree: Worktree, start: str | None = None) -> bool:
    """Whether the worktree has uncommitted changes, or (with `start`, the commit it
    started from) commits since."""
    if _out(_git(worktree.path, "status", "--porcelain")):
        return True
    if start is None:
        return False
    since = f"{_gitsafe.checked_sha(start, 'the starting commit')}..HEAD"
    done = _git(worktree.path, "rev-list", "--count", since)
    return done.returncode == 0 and _out(done) not in ("", "0")


def remove(cwd: Path, name: str, data_dir: Path, *, force: bool = False,
           delete_branch: bool = False) -> Worktree:  # fmt: skip
    """Remove Loom's worktree NAME (its folder; git forgets it). Refused when it has
    uncommitted changes, unless `force`. The branch stays unless `delete_branch`."""
    worktree = find(cwd, name, data_dir)
    if not worktree.missing and not force and changed(worktree):
        raise SetupError(
            f"worktree {name!r} ({worktree.path}) has uncommitted changes",
            "commit or stash them there first, or pass --force to throw them away",
        )
    args = ["worktree", "remove", *(["--force"] if force else []), "--end-of-options",
            str(worktree.path)]  # fmt: skip
    done = _git(worktree.repo, *args, write=True)
    if done.returncode != 0 and worktree.missing:
        done = _git(worktree.repo, "worktree", "prune", write=True)
    if done.returncode != 0:
        raise SetupError(f"git could not remove the worktree {name!r}: {_err(done)}")
    if delete_branch:
        done = _git(worktree.repo, "branch", "-D", "--end-of-options", worktree.branch,
                    write=True)  # fmt: skip
        if done.returncode != 0:
            raise SetupError(f"the worktree is gone, but not its branch: {_err(done)}")
    return worktree


# -- the work done in a worktree: commit it, show it, merge it ---------------------------

FALLBACK_IDENTITY = ("-c", "user.name=Loom", "-c", "user.email=loom@localhost")


def _identity(path: Path) -> tuple[str, ...]:
    """`-c user.*` for a commit where git has no identity configured (a fresh machine,
    CI): the commit is then Loom's, not refused."""
    if _out(_git(path, "config", "user.email")) and _out(_git(path, "config", "user.name")):
        return ()
    return FALLBACK_IDENTITY


def commit_work(worktree: Worktree, message: str) -> str | None:
    """Commit every change in the worktree (new and deleted files too) on its branch.
    The new commit's id, or None when there was nothing to commit."""
    if worktree.missing or not _out(_git(worktree.path, "status", "--porcelain")):
        return None
    done = _git(worktree.path, "add", "-A", write=True)
    if done.returncode == 0:
        done = _git(worktree.path, *_identity(worktree.path), "commit", "-q", "--no-verify",
                    "-m", message, write=True)  # fmt: skip
    if done.returncode != 0:
        raise SetupError(
            f"git could not commit the work in worktree {worktree.name!r}: {_err(done)}",
            f"commit it yourself in {worktree.path}",
        )
    return _out(_git(worktree.path, "rev-parse", "HEAD"))


def find(cwd: Path, name: str, data_dir: Path) -> Worktree:
    """Loom's worktree NAME of the project around `cwd`; NotFound naming the others."""
    found = {w.name: w for w in list_worktrees(cwd, data_dir)}
    worktree = found.get(name)
    if worktree is None:
        names = ", ".join(found) or "none"
        raise NotFound(f"no Loom worktree {name!r} in this project (there are: {names})",
                       "`loom worktree list` shows them")  # fmt: skip
    return worktree


def diff(worktree: Worktree) -> str:
    """What the worktree changed since it left the project's current commit: committed
    and uncommitted changes as one patch, then the new files git does not track yet."""
    base = _out(_git(worktree.repo, "merge-base", "HEAD", worktree.branch))
    if not base:
        raise SetupError(f"branch {worktree.branch} shares no history with {worktree.repo}")
    patch = _git(worktree.path, "diff", "--no-ext-diff", "--no-color", base)
    if patch.returncode != 0:
        raise SetupError(f"git could not diff worktree {worktree.name!r}: {_err(patch)}")
    text = patch.stdout.decode("utf-8", "replace")
    untracked = _out(_git(worktree.path, "ls-files", "--others", "--exclude-standard"))
    if untracked:
        text += "".join(f"new file, not committed yet: {line}\n" for line in untracked.splitlines())
    return text


def merge(worktree: Worktree) -> tuple[str | None, str]:
    """Commit the worktree's remaining work on its branch, then merge the branch into
    the project's checked-out branch. (the commit made first or None, git's summary)."""
    made = commit_work(worktree, f"loom: work in worktree {worktree.name}")
    done = _git(worktree.repo, *_identity(worktree.repo), "merge", "--no-edit", "--no-verify",
                "--end-of-options", worktree.branch, write=True)  # fmt: skip
    if done.returncode != 0:
        said = _err(done) or " ".join(_out(done).split())[:300]
        conflicted = "CONFLICT" in done.stdout.decode("utf-8", "replace")
        raise SetupError(
            f"git could not merge {worktree.branch} into {worktree.repo}: {said}",
            "resolve the conflicts there and `git commit`, or `git merge --abort`"
            if conflicted
            else "commit or stash your own changes there first, then merge again",
        )
    lines = _out(done).splitlines()
    return made, (lines[0] if lines else "merged")
