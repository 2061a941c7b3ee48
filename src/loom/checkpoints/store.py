"""The checkpoint store: snapshots of a project's files in a private git object store.

One store per project under `$XDG_DATA_HOME/loom/checkpoints/<project-hash>/`: a bare
git dir of its own with its own index, used with the project as work tree. The person's
repo (objects, index, refs, stash, hooks) is never read or written, and a project that
is not a git repo works the same.

Which files: the repo index's rules (loom.ignore's defaults and `[repo]
ignore`, the project's .git/info/exclude, nested .gitignore files), applied by git
itself through the store's info/exclude, without files over `[checkpoints]
max_file_bytes`. Speed: the private index keeps each file's stat data, so a snapshot is
one walk in C (`git status` against that stat cache; the store's HEAD is the previous
snapshot) that hashes only files whose stat moved, then `write-tree`; the commit object
is written here. Unchanged folders cost no new objects (git's store dedupes).
Each snapshot is a commit (its date drives `gc`) under `refs/checkpoints/`.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import stat
import time
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from loom._gitsafe import NO_HOOKS, is_sha, run_git
from loom.checkpoints import modes
from loom.checkpoints._git import CheckpointError, Git

DEFAULT_MAX_FILE_BYTES = 1_000_000
REF_PREFIX = "refs/checkpoints/"
# Stored bytes must be the file's bytes: no eol conversion, filters or encodings from
# the project's .gitattributes (info/attributes outranks them).
ATTRIBUTES = "* -text -filter -ident -working-tree-encoding\n"
CONFIG = {
    "core.autocrlf": "false",
    "core.filemode": "true",
    "core.symlinks": "true",
    "core.quotepath": "false",
    "gc.auto": "0",
    "commit.gpgsign": "false",
    "core.fsmonitor": "false",
    "core.hooksPath": NO_HOOKS,  # (every call also overrides both: see _git.py)
}


def project_key(project_root: Path) -> str:
    """The store's folder name for a project: a hash of its resolved path."""
    return hashlib.sha256(str(project_root.resolve()).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Snapshot:
    commit: str
    tree: str
    too_large: tuple[str, ...] = ()
    modes: tuple[tuple[str, int], ...] = ()  # files whose mode git would not restore


@dataclass
class RestoreResult:
    changed: list[str] = field(default_factory=list)  # written back (content or mode)
    created: list[str] = field(default_factory=list)  # brought back (were deleted)
    removed: list[str] = field(default_factory=list)  # deleted (did not exist then)

    @property
    def paths(self) -> list[str]:
        return sorted({*self.changed, *self.created, *self.removed})


@dataclass(frozen=True)
class GcReport:
    removed_checkpoints: int
    kept_checkpoints: int
    size_before: int
    size_after: int


class CheckpointStore:
    def __init__(
        self,
        project_root: Path,
        store_dir: Path,
        *,
        ignore: Iterable[str] | None = None,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    ) -> None:
        from loom.ignore import DEFAULT_IGNORES

        self.project_root = project_root.resolve()
        self.dir = store_dir
        self.git_dir = store_dir / "git"
        self.ignore = tuple(DEFAULT_IGNORES if ignore is None else ignore)
        self.max_file_bytes = max_file_bytes
        self.git = Git(self.git_dir, self.project_root, store_dir / "index")
        self._excludes = ""
        self._last: Snapshot | None = None
        self._folders: dict[str, bool] = {}  # one snapshot's answers of _is_real_folder

    @classmethod
    def for_project(
        cls, project_root: Path, data_dir: Path, config: object | None = None
    ) -> CheckpointStore:
        """The store of `project_root` under `data_dir/checkpoints/`, set up from a
        LoomConfig (`[repo] ignore`, `[checkpoints] max_file_bytes`) when given."""
        from loom.ignore import DEFAULT_IGNORES

        ignore = DEFAULT_IGNORES
        max_bytes = DEFAULT_MAX_FILE_BYTES
        if config is not None:
            ignore = DEFAULT_IGNORES + tuple(getattr(config.repo, "ignore", ()))  # type: ignore[attr-defined]
            section = getattr(config, "checkpoints", None)
            max_bytes = getattr(section, "max_file_bytes", DEFAULT_MAX_FILE_BYTES)
        store_dir = data_dir / "checkpoints" / project_key(project_root)
        return cls(project_root, store_dir, ignore=ignore, max_file_bytes=max_bytes)

    # -- taking snapshots -------------------------------------------------------------

    def snapshot(self, label: str = "checkpoint") -> Snapshot:
        """Record the project's files as they are now; cheap when little changed."""
        with self._locked():
            return self._snapshot(label)

    def _snapshot(self, label: str) -> Snapshot:
        self._write_excludes()
        self._folders.clear()
        touched = self._changes()
        too_large = {path for path in touched if self._size(path) > self.max_file_bytes}
        gone = {path for path in touched - too_large if not self._is_file_here(path)}
        if gone | too_large:  # deleted, under a folder that is now a file or a link, or
            self._update_index(("--force-remove",), gone | too_large)  # grown too large
        if touched - too_large - gone:
            # --replace: a folder that became a file (or the reverse) replaces its entries
            self._update_index(("--add", "--remove", "--replace"), touched - too_large - gone)
        tree = self.git.text("write-tree")
        last = self._last
        looked_at = touched | {p for p, _ in last.modes} if last else self._indexed()
        recorded = tuple(sorted(modes.special_modes(self.project_root, looked_at).items()))
        if (
            last is not None
            and (last.tree, last.modes) == (tree, recorded)
            and self._ref_file(last.commit).exists()
        ):
            snap = Snapshot(last.commit, tree, tuple(sorted(too_large)), recorded)
        else:
            message = (label or "checkpoint") + modes.trailer(dict(recorded))
            commit = write_commit(self.git_dir, tree, message)
            self._write_ref(commit)
            snap = Snapshot(commit, tree, tuple(sorted(too_large)), recorded)
        self._set_head(snap.commit)
        self._last = snap
        return snap

    def _write_excludes(self) -> None:
        """The repo index's ignore rules, for git: `[repo] ignore` and Loom's defaults,
        the project's own .git/info/exclude (nested .gitignore files git reads itself)."""
        from loom.ignore import ALWAYS_IGNORED

        lines = [*self.ignore, *(f"{name}/" for name in sorted(ALWAYS_IGNORED))]
        with contextlib.suppress(OSError):
            exclude = self.project_root / ".git" / "info" / "exclude"
            lines += exclude.read_text("utf-8", "replace").splitlines()
        text = "\n".join(lines) + "\n"
        if text != self._excludes:
            target = self.git_dir / "info" / "exclude"
            if not target.exists() or target.read_text("utf-8", "replace") != text:
                target.write_text(text, "utf-8")
            self._excludes = text

    def _indexed(self) -> set[str]:
        """Every file of the store's index (a store's first snapshot looks at them all)."""
        out = self.git.run("ls-files", "-z")
        return {_decode(raw) for raw in out.split(b"\0") if raw}

    def _update_index(self, flags: tuple[str, ...], paths: Iterable[str]) -> None:
        stdin = b"".join(_encode(path) + b"\0" for path in sorted(paths))
        self.git.run("update-index", *flags, "-z", "--stdin", stdin=stdin)

    def _changes(self) -> set[str]:
        """Files whose stat moved since the private index saw them (content, mode,
        deleted) and files it does not know yet, in one walk in C (`git status` against
        the stat cache; it re-hashes only racily clean entries). The store's HEAD is the
        last snapshot, so the index-vs-HEAD half of the status is empty."""
        out = self.git.run(
            "status",
            "--porcelain=v2",
            "-z",
            "--untracked-files=all",
            "--no-renames",
            "--ignore-submodules=all",
        )
        changed: set[str] = set()
        for entry in out.split(b"\0"):
            if entry.startswith(b"1 "):  # 1 XY sub mH mI mW hH hI path
                fields = entry.split(b" ", 8)
                if len(fields) == 9 and fields[1][1:2] != b".":
                    changed.add(_decode(fields[8]))
            elif entry.startswith(b"u "):  # unmerged: cannot happen in our index; re-add
                changed.add(_decode(entry.split(b" ", 10)[-1]))
            elif entry.startswith(b"? ") and not entry.endswith(b"/"):
                changed.add(_decode(entry[2:]))  # ("name/": a repo of its own, left out)
        return changed

    def _is_file_here(self, path: str) -> bool:
        """Whether `path` is a file, symlink or repo of its own reached through real
        folders only (git refuses a path "beyond a symbolic link" or under a file)."""
        parent = path.rpartition("/")[0]
        if parent and not self._is_real_folder(parent):
            return False
        try:
            os.lstat(self.project_root / path)
        except OSError:
            return False
        return True

    def _is_real_folder(self, folder: str) -> bool:
        known = self._folders.get(folder)
        if known is None:
            parent = folder.rpartition("/")[0]
            try:
                real = stat.S_ISDIR(os.lstat(self.project_root / folder).st_mode)
            except OSError:
                real = False
            known = real and (not parent or self._is_real_folder(parent))
            self._folders[folder] = known
        return known

    def _size(self, path: str) -> int:
        try:
            return os.lstat(self.project_root / path).st_size
        except OSError:
            return 0  # gone: update-index --remove takes it out

    def _ref_file(self, commit: str) -> Path:
        return self.git_dir / REF_PREFIX / commit

    def _write_ref(self, commit: str) -> None:
        # A loose ref is a file holding the id; we own this store and hold its lock.
        ref = self._ref_file(commit)
        ref.parent.mkdir(parents=True, exist_ok=True)
        ref.write_text(commit + "\n")

    def _set_head(self, commit: str) -> None:
        """The store's (detached) HEAD follows the files' last known state."""
        (self.git_dir / "HEAD").write_text(commit + "\n")

    # -- comparing and restoring ------------------------------------------------------

    def changed_paths(self, old: str, new: str) -> list[str]:
        """Paths whose content, mode or existence differs between two checkpoints."""
        if old == new:
            return []
        old, new = _commit_id(old), _commit_id(new)
        out = self.git.run(
            "diff-tree", "-r", "-z", "--no-renames", "--name-only", "--end-of-options", old, new
        )
        return sorted(_decode(raw) for raw in out.split(b"\0") if raw)

    def read(self, commit: str, path: str, limit: int) -> bytes | None:
        """The file `path` as checkpoint `commit` kept it (None: it had none, or it is over
        `limit` bytes)."""
        if not is_sha(commit) or not path or path.startswith(("/", "-")):
            return None
        spec = f"{_commit_id(commit)}:{path}"
        done = self.git.run("cat-file", "-s", "--end-of-options", spec, check=False)
        if not done.strip().isdigit() or int(done) > limit:
            return None
        return self.git.run("cat-file", "blob", "--end-of-options", spec)

    def exists(self, commit: str) -> bool:
        """Whether the checkpoint is still in the store (gc may have removed it)."""
        if not is_sha(commit):
            return False
        return self.git.ok("cat-file", "-e", "--end-of-options", f"{commit}^{{tree}}")

    def restore(self, target: str, current: Snapshot | None = None) -> RestoreResult:
        """Make the project's files what they were at `target` (bytes and modes), deleting
        files that did not exist then. `current` is a snapshot taken just before (taken
        here when not given). Ignored and too-large files are left alone."""
        target = _commit_id(target)
        with self._locked():
            if not self.exists(target):
                raise CheckpointError(
                    f"checkpoint {target[:12]} is no longer in the store (removed by "
                    "`loom checkpoints gc` or keep_days); nothing was changed"
                )
            if current is None:
                current = self._snapshot("before restore")
            result = self._diff(current.commit, target)
            wanted = modes.parse(self.git.run("cat-file", "commit", target))
            had = dict(current.modes)
            # files whose bytes match but whose recorded mode does not (600 -> 644)
            result.changed += [
                p
                for p in sorted({*wanted, *had} - {*result.paths})
                if wanted.get(p) != had.get(p) and (self.project_root / p).exists()
            ]
            if not result.paths:
                return result
            # A two-tree read-tree moves index and files from `current` to `target`
            # (git removes emptied folders); the index matches `current` by construction.
            self.git.run("read-tree", "-m", "-u", "--end-of-options", current.commit, target)
            modes.apply(self.project_root, [*result.changed, *result.created], wanted)
            self._set_head(target)
            self._last = None
            return result

    def _diff(self, old: str, new: str) -> RestoreResult:
        out = self.git.run(
            "diff-tree", "-r", "-z", "--no-renames", "--name-status", "--end-of-options",
            _commit_id(old), _commit_id(new),
        )  # fmt: skip
        parts = [_decode(raw) for raw in out.split(b"\0") if raw]
        result = RestoreResult()
        for status, path in zip(parts[0::2], parts[1::2], strict=False):
            if status == "A":
                result.created.append(path)
            elif status == "D":
                result.removed.append(path)
            else:
                result.changed.append(path)
        return result

    # -- housekeeping -----------------------------------------------------------------

    def size_bytes(self) -> int:
        total = 0
        if not self.dir.exists():
            return 0
        for folder, _dirs, files in os.walk(self.dir):
            for name in files:
                with contextlib.suppress(OSError):
                    total += os.lstat(os.path.join(folder, name)).st_size
        return total

    def gc(self, keep_days: float, keep: Iterable[str] = ()) -> GcReport:
        """Forget checkpoints older than `keep_days` (except `keep`) and pack the rest."""
        with self._locked():
            before = self.size_bytes()
            if not self.git_dir.exists():
                return GcReport(0, 0, 0, 0)
            cutoff = time.time() - keep_days * 86400
            keep_set = set(keep)
            out = self.git.text(
                "for-each-ref", "--format=%(refname) %(committerdate:unix)", REF_PREFIX
            )
            old: list[str] = []
            kept = 0
            for line in out.splitlines():
                ref, _, stamp = line.rpartition(" ")
                commit = ref.removeprefix(REF_PREFIX)
                if stamp.isdigit() and int(stamp) < cutoff and commit not in keep_set:
                    old.append(ref)
                else:
                    kept += 1
            if old:
                batch = "".join(f"delete {ref}\n" for ref in old).encode()
                self.git.run("update-ref", "--stdin", stdin=batch)
                self._last = None
            self.git.run("reflog", "expire", "--expire=now", "--all", check=False)
            self.git.run("repack", "-a", "-d", "-q")
            self.git.run("prune", "--expire=now")
            return GcReport(len(old), kept, before, self.size_bytes())

    # -- internals ---------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """One writer at a time per store (sessions in several processes share it). The
        store is made under the lock: a parent and its sub-agents take their first
        checkpoint of a project at the same time."""
        self.dir.mkdir(parents=True, exist_ok=True)
        with open(self.dir / "lock", "a+b") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                self._ensure()
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _ensure(self) -> None:
        if (self.git_dir / "HEAD").exists():
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        _init_bare(self.git_dir, self.git.env)
        for key, value in CONFIG.items():
            self.git.run("config", key, value)
        hooks = self.git_dir / "hooks"
        for sample in hooks.glob("*") if hooks.exists() else ():
            with contextlib.suppress(OSError):
                sample.unlink()
        info = self.git_dir / "info"
        info.mkdir(exist_ok=True)
        (info / "attributes").write_text(ATTRIBUTES)


def _init_bare(git_dir: Path, env: dict[str, str]) -> None:
    clean = {k: v for k, v in env.items() if k not in ("GIT_DIR", "GIT_WORK_TREE")}
    try:
        done = run_git(
            git_dir.parent, "init", "-q", "--bare", "--end-of-options", str(git_dir),
            read_only=False, repo_env=clean,
        )  # fmt: skip
    except OSError as exc:
        raise CheckpointError(
            "checkpoints need the `git` program, which was not found; install git"
        ) from exc
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip()
        raise CheckpointError(f"cannot create the checkpoint store at {git_dir}: {message}")


def _commit_id(value: str) -> str:
    """A checkpoint id as read from a thread record: hex or a CheckpointError (never an
    option or a revision expression for git)."""
    if not is_sha(value):
        raise CheckpointError(
            f"the thread's checkpoint record {str(value)[:40]!r} is not a commit id; the "
            "thread file was changed outside Loom, nothing was restored"
        )
    return value


def _encode(path: str) -> bytes:
    return path.encode("utf-8", "surrogateescape")


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def write_commit(git_dir: Path, tree: str, message: str) -> str:
    """Write a commit object for `tree` straight into the store (a loose object: the
    zlib-deflated "commit <size>\\0<body>", named by its SHA-1): one git process less
    per snapshot."""
    stamp = f"{int(time.time())} +0000"
    who = "Loom checkpoints <checkpoints@loom.invalid>"
    body = f"tree {tree}\nauthor {who} {stamp}\ncommitter {who} {stamp}\n\n{message}\n"
    data = body.encode("utf-8")
    raw = b"commit %d\0" % len(data) + data
    sha = hashlib.sha1(raw).hexdigest()
    target = git_dir / "objects" / sha[:2] / sha[2:]
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f"tmp_{os.getpid()}_{sha[2:]}")
        tmp.write_bytes(zlib.compress(raw))
        os.replace(tmp, target)
    return sha
