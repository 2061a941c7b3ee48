"""After each sandboxed command: take away any `.loom.toml`, `.mcp.json` or file under a
`.loom/` folder that the command created or changed, at any depth of the project,
before Loom reads them (they choose programs, servers and permissions Loom uses outside
the sandbox: a planted `[lsp] servers` would run as the person).

Why a sweep after the command and not a refusal inside it: existing ones are read-only
mounts (see policy.py), but a mount needs an existing path, so a new file cannot be
refused that way without first creating it in the person's tree; Landlock and seccomp
cannot refuse a file by its name (Landlock rules are folder hierarchies, seccomp sees
pointers, not paths). The sweep is sound because the command is over when it runs: the
sandbox has its own PID namespace, so when the command ends every process it started is
gone, and nothing can write after the sweep. A changed file has a new ctime, which no
program can set back (utimes sets ctime to now; a rename or a hard link sets it too), so
"ctime at or after the command started" finds everything the command made or touched.
A folder moved into place keeps its files' old ctimes, but it gets a new one itself;
so a `.loom` folder is taken away whole when it or anything in it changed.

The folder git's `core.hooksPath` names, when it lies in the project and does not exist
yet, is taken away too if a command creates it (an existing one is a read-only mount):
the person's own next `git commit` would run the hooks in it.

Taken-away files go to Loom's quarantine folder (or are deleted when there is none),
and the model is told to use `file_write`, which asks the person.

Cost: the first sweep of a session lists every folder of the project (`.git` folders
are skipped: Loom reads no configuration there, and the repository's is read-only
anyway); later ones (`Sweeper`) lstat each folder and each guarded path, and list only
the folders whose ctime changed. Linear in the size of the tree either way.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import threading
import time
from pathlib import Path

GUARDED_NAMES = frozenset({".loom.toml", ".mcp.json"})
GUARDED_FOLDER = ".loom"
SKIPPED_FOLDER = ".git"
# File times come from the kernel's coarse clock, which may lag `time_ns()` by a tick.
CLOCK_SLACK_NS = 50_000_000


def started() -> int:
    """The moment to pass to `sweep`, taken just before the command starts."""
    return time.time_ns() - CLOCK_SLACK_NS


def sweep(root: Path, since_ns: int, quarantine: Path | None) -> list[str]:
    """Take away guarded files made or changed since `since_ns` under `root`; the paths
    taken away (relative to `root`, `/`-separated). Walks the whole tree; `Sweeper`
    remembers it between commands."""
    return _take_all(root, _find(root, since_ns), since_ns, quarantine)


class Sweeper:
    """The sweep for one project, command after command, without walking the whole tree
    each time: it remembers every folder's ctime and every guarded path it saw. A folder
    whose entries changed (a file made, removed or renamed in or out) has a new ctime, so
    only those folders are listed again (a new subfolder is walked whole); the guarded
    paths are checked one by one (a file written in place leaves its folder's ctime
    alone). A ctime read within a clock tick of now is not trusted (a change in the same
    tick would keep it): that folder is listed again next time."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._folders: dict[str, int] | None = None  # path -> ctime_ns (-1: list again)
        self._guarded: set[str] = set()
        self._nested_git: set[str] = set()  # `.git` folders and files below the root
        self._lock = threading.Lock()

    def prepare(self) -> None:
        """Walk the tree now if it was never walked (before a command: it learns where
        nested repositories' `.git` are, and the sweep after is then incremental)."""
        with self._lock:
            if self._folders is None:
                self._folders = {}
                self._walk(str(self.root), time.time_ns() + 10**18)

    def nested_git(self) -> list[Path]:
        """The `.git` of repositories inside the project (submodules, vendored clones)
        seen so far, that still exist."""
        with self._lock:
            return [Path(p) for p in sorted(self._nested_git) if os.path.lexists(p)]

    def sweep(self, since_ns: int, quarantine: Path | None) -> list[str]:
        with self._lock:
            if self._folders is None:
                self._folders = {}
                found = self._walk(str(self.root), since_ns)
            else:
                found = self._changes(since_ns)
            return _take_all(self.root, found, since_ns, quarantine)

    def _changes(self, since_ns: int) -> list[Path]:
        assert self._folders is not None
        found: list[Path] = []
        for path in list(self._guarded):
            try:
                info = os.lstat(path)
            except OSError:
                self._guarded.discard(path)
                continue
            is_dir = stat.S_ISDIR(info.st_mode)
            if info.st_ctime_ns >= since_ns or (is_dir and _tree_changed(path, since_ns)):
                found.append(Path(path))
        for folder, seen in list(self._folders.items()):
            try:
                ctime = os.lstat(folder).st_ctime_ns
            except OSError:
                del self._folders[folder]
                continue
            if ctime != seen or seen < 0:
                found += self._list(folder, since_ns, walk_new=True)
        return [path for path in dict.fromkeys(found)]

    def _walk(self, top: str, since_ns: int) -> list[Path]:
        found: list[Path] = []
        pending = [top]
        while pending:
            folder = pending.pop()
            found += self._list(folder, since_ns, walk_new=False, pending=pending)
        return found

    def _list(
        self, folder: str, since_ns: int, *, walk_new: bool, pending: list[str] | None = None
    ) -> list[Path]:
        assert self._folders is not None
        try:
            ctime = os.lstat(folder).st_ctime_ns
        except OSError:
            self._folders.pop(folder, None)
            return []
        recent = time.time_ns() - ctime < CLOCK_SLACK_NS
        self._folders[folder] = -1 if recent else ctime
        found: list[Path] = []
        for entry in _entries(folder):
            name = entry.name.casefold()
            is_dir = _is_dir(entry)
            if name == GUARDED_FOLDER or name in GUARDED_NAMES:
                self._guarded.add(entry.path)
                tree = is_dir and name == GUARDED_FOLDER and _tree_changed(entry.path, since_ns)
                if _changed(entry, since_ns) or tree:
                    found.append(Path(entry.path))
            elif name == SKIPPED_FOLDER:
                if folder != str(self.root):
                    self._nested_git.add(entry.path)
            elif is_dir and entry.path not in self._folders:
                if pending is not None:
                    pending.append(entry.path)
                elif walk_new:
                    found += self._walk(entry.path, since_ns)
        return found


def take_away_new(root: Path, path: Path, quarantine: Path | None) -> list[str]:
    """Take away `path` (inside `root`) when it exists now: a folder that did not exist
    before the command (see `Sandbox.launch`: the hooks folder git's config names)."""
    if not os.path.lexists(path):
        return []
    return _take_all(root, [path], time.time_ns(), quarantine)


def _take_all(root: Path, found: list[Path], since_ns: int, quarantine: Path | None) -> list[str]:
    if not found:
        return []
    batch = None
    if quarantine is not None:
        batch = quarantine / time.strftime("%Y%m%dT%H%M%S") / f"{os.getpid()}-{since_ns}"
    taken: list[str] = []
    for path in found:
        relative = path.relative_to(root).as_posix()
        if _take_away(path, None if batch is None else batch / relative):
            taken.append(relative)
    return taken


def _find(root: Path, since_ns: int) -> list[Path]:
    found: list[Path] = []
    pending = [str(root)]
    while pending:
        for entry in _entries(pending.pop()):
            name = entry.name.casefold()  # case-insensitive file systems too
            is_dir = _is_dir(entry)
            if name == GUARDED_FOLDER:
                # the whole folder, when anything in it (or itself: moved here) changed
                if _changed(entry, since_ns) or (is_dir and _tree_changed(entry.path, since_ns)):
                    found.append(Path(entry.path))
            elif name in GUARDED_NAMES:
                if _changed(entry, since_ns):
                    found.append(Path(entry.path))
            elif is_dir and name != SKIPPED_FOLDER:
                pending.append(entry.path)
    return found


def _tree_changed(folder: str, since_ns: int) -> bool:
    pending = [folder]
    while pending:
        for entry in _entries(pending.pop()):
            if _changed(entry, since_ns):
                return True
            if _is_dir(entry):
                pending.append(entry.path)
    return False


def _entries(folder: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as listing:
            return list(listing)
    except OSError:
        return []


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _changed(entry: os.DirEntry[str], since_ns: int) -> bool:
    try:
        return entry.stat(follow_symlinks=False).st_ctime_ns >= since_ns
    except OSError:
        return False


def _take_away(path: Path, destination: Path | None) -> bool:
    try:
        if destination is not None:
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(path, destination)
        elif path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    except OSError:
        with contextlib.suppress(OSError):  # at least not where Loom would read it
            path.unlink() if path.is_symlink() or not path.is_dir() else shutil.rmtree(path)
        return not os.path.lexists(path)
    return True
