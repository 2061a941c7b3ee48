"""Walk a project: every file git would not ignore, with size, mtime and language.

Only `stat` is done here (no reads), so a warm rescan of a large tree stays cheap; files
over the size limit are left out. Directory symlinks are not followed (no loops).

With the previous scan's directory listings (`DirCache`), a directory whose mtime has
not moved is not listed again: creating, deleting or renaming an entry changes its
directory's mtime, so its entries are the ones kept last time and only they are stat'ed
(a file edited in place changes its own mtime, not its directory's). Ignore decisions
are kept too, so the listings count only while every .gitignore, .git/info/exclude and
the configured patterns are as they were; else the whole tree is walked again.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import stat as stat_mod
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from loom import defaults
from loom._beneath import resolve_beneath
from loom.ignore import ALWAYS_IGNORED, DEFAULT_IGNORES, IgnoreRules, Layer
from loom.repointel.languages import detect_language

DEFAULT_MAX_FILE_BYTES = defaults.REPO_MAX_FILE_BYTES
DIR_CACHE_FORMAT = 1
RACY_WINDOW_NS = 2_000_000_000  # a directory changed this recently may change unnoticed


class FileStat(NamedTuple):
    size: int
    mtime_ns: int
    language: str | None


# {rel_dir: (mtime_ns, kept file names, kept subdirectory names, has .gitignore)}
Listings = dict[str, tuple[int, list[str], list[str], bool]]


@dataclass
class DirCache:
    """What a scan learnt about the tree's directories, for the next scan."""

    key: tuple  # the ignore settings and .git/info/exclude's stat
    gitignores: dict[str, tuple[int, int]]  # rel path -> (mtime_ns, size)
    listings: Listings

    def to_plain(self) -> tuple:
        return (DIR_CACHE_FORMAT, self.key, self.gitignores, self.listings)

    @classmethod
    def from_plain(cls, plain: object) -> DirCache:
        """Raises ValueError for anything that is not a dir cache of this format."""
        if not (
            isinstance(plain, tuple)
            and len(plain) == 4
            and plain[0] == DIR_CACHE_FORMAT
            and isinstance(plain[1], tuple)
            and isinstance(plain[2], dict)
            and isinstance(plain[3], dict)
        ):
            raise ValueError("not a directory cache")
        for entry in plain[3].values():
            if not (
                isinstance(entry, tuple)
                and len(entry) == 4
                and isinstance(entry[0], int)
                and isinstance(entry[1], list)
                and isinstance(entry[2], list)
                and all(type(name) is str for name in entry[1])
                and all(type(name) is str for name in entry[2])
            ):
                raise ValueError("not a directory cache")
        return cls(plain[1], plain[2], plain[3])


@dataclass
class ScanResult:
    files: dict[str, FileStat] = field(default_factory=dict)
    too_large: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    dirs: DirCache | None = None  # for the next scan (None: nothing worth keeping)
    relisted: int = 0  # directories listed (not answered from the dir cache)


def load_dir_cache(path: Path) -> DirCache | None:
    """The listings a previous scan saved; None when missing, unreadable or corrupt."""
    try:
        return DirCache.from_plain(marshal.loads(path.read_bytes()))
    except (OSError, ValueError, EOFError, TypeError):
        return None


def save_dir_cache(path: Path, dirs: DirCache) -> None:
    """Atomic replace; a failure only means the next scan lists every directory."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(marshal.dumps(dirs.to_plain()))
        os.replace(tmp, path)
    except (OSError, ValueError):
        with contextlib.suppress(OSError):
            tmp.unlink()


def _stat_key(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def _still_valid(root: str, key: tuple, previous: DirCache | None) -> Listings:
    """The previous listings, if the ignore rules they were filtered with still hold."""
    if previous is None or previous.key != key:
        return {}
    for rel, seen in previous.gitignores.items():
        if _stat_key(os.path.join(root, rel)) != tuple(seen):
            return {}
    return previous.listings


def scan_project(
    root: str,
    ignore: list[str] | tuple[str, ...] = DEFAULT_IGNORES,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    previous: DirCache | None = None,
) -> ScanResult:
    key = (tuple(ignore), _stat_key(os.path.join(root, ".git", "info", "exclude")))
    known = _still_valid(root, key, previous)
    if not known:
        return _scan(root, ignore, max_file_bytes, key, {})
    try:
        if previous is not None:
            return _rescan_known(root, max_file_bytes, previous)
    except _DirectoriesMoved:
        pass
    except (TypeError, ValueError, AttributeError, IndexError):
        return _scan(root, ignore, max_file_bytes, key, {})  # a damaged entry: walk it all
    try:
        return _scan(root, ignore, max_file_bytes, key, known)
    except _GitignoresMoved:
        return _scan(root, ignore, max_file_bytes, key, {})
    except (TypeError, ValueError, AttributeError, IndexError):
        return _scan(root, ignore, max_file_bytes, key, {})  # a damaged entry: walk it all


class _GitignoresMoved(Exception):
    """A directory gained or lost its .gitignore: kept ignore decisions may be wrong."""


class _DirectoriesMoved(Exception):
    """A directory's entries changed (or it is not in the listings): it must be listed."""


def _rescan_known(root: str, max_file_bytes: int, previous: DirCache) -> ScanResult:
    """The common case, every directory as it was: stat the kept files of the kept
    listings, and nothing else (no ignore rules to load or match: they decided when the
    listings were made). Raises _DirectoriesMoved when some directory must be listed."""
    result = ScanResult(dirs=previous)
    languages: dict[str, str | None] = {}
    listings = previous.listings
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        folder = os.path.join(root, rel_dir) if rel_dir else root
        cached = listings.get(rel_dir)
        if cached is None:
            raise _DirectoriesMoved
        try:
            mtime = os.stat(folder).st_mtime_ns
        except OSError:
            raise _DirectoriesMoved from None
        if mtime != cached[0]:
            raise _DirectoriesMoved
        _add_files(result, root, folder, rel_dir, cached[1], max_file_bytes, languages)
        stack.extend(f"{rel_dir}/{name}" if rel_dir else name for name in cached[2])
    return result


def _scan(
    root: str, ignore: list[str] | tuple[str, ...], max_file_bytes: int, key: tuple, known: Listings
) -> ScanResult:
    rules = IgnoreRules(root, ignore)
    result = ScanResult()
    listings: Listings = {}
    gitignores: dict[str, tuple[int, int]] = {}
    now = time.time_ns()
    # False: an ignore file changed too recently to rely on its mtime
    trustworthy = key[1] is None or now - key[1][0] > RACY_WINDOW_NS
    languages: dict[str, str | None] = {}
    stack: list[tuple[str, tuple[Layer, ...]]] = [("", rules.root_layers)]
    while stack:
        rel_dir, layers = stack.pop()
        folder = os.path.join(root, rel_dir) if rel_dir else root
        try:
            dir_mtime = os.stat(folder).st_mtime_ns  # before listing: a later change shows
        except OSError as exc:
            result.problems.append(f"{rel_dir or '.'}: cannot list ({exc.strerror})")
            continue
        cached = known.get(rel_dir)
        if cached is not None and cached[0] == dir_mtime:
            _, names, subdirs, has_gitignore = cached
        else:
            result.relisted += 1
            names, subdirs, has_gitignore, ok = _list(folder, rel_dir, rules, layers, result)
            if not ok:
                continue
            if cached is not None and cached[3] != has_gitignore:
                raise _GitignoresMoved
        layers = rules.layers_for(rel_dir, layers, has_gitignore)
        if has_gitignore:
            rel_gitignore = f"{rel_dir}/.gitignore" if rel_dir else ".gitignore"
            seen = _stat_key(os.path.join(root, rel_gitignore))
            if seen is not None:
                gitignores[rel_gitignore] = seen
                trustworthy = trustworthy and now - seen[0] > RACY_WINDOW_NS
        if now - dir_mtime > RACY_WINDOW_NS:
            listings[rel_dir] = (dir_mtime, names, subdirs, has_gitignore)
        _add_files(result, root, folder, rel_dir, names, max_file_bytes, languages)
        for name in subdirs:
            stack.append((f"{rel_dir}/{name}" if rel_dir else name, layers))
    if trustworthy:
        result.dirs = DirCache(key, gitignores, listings)
    return result


def _add_files(
    result: ScanResult,
    root: str,
    folder: str,
    rel_dir: str,
    names: list[str],
    max_file_bytes: int,
    languages: dict[str, str | None],
) -> None:
    """Stat the files `names` of one directory into `result` (languages: by suffix, for
    this scan)."""
    files = result.files
    for name in names:
        rel = f"{rel_dir}/{name}" if rel_dir else name
        try:
            st = os.lstat(f"{folder}/{name}")
            if stat_mod.S_ISLNK(st.st_mode):
                # a link counts only when it leads to a file inside the project: the
                # index must never hand the model an outside file's definitions
                if resolve_beneath(root, rel) is None:
                    continue
                st = os.stat(f"{folder}/{name}")
        except OSError:
            continue  # dangling link or a file that vanished: not part of the project
        if not stat_mod.S_ISREG(st.st_mode):
            continue
        if st.st_size > max_file_bytes:
            result.too_large.append(rel)
            continue
        dot = name.rfind(".")
        suffix = name[dot:] if dot > 0 else ""
        if suffix in languages:
            language = languages[suffix]
        else:
            language = languages[suffix] = detect_language(name)
        files[rel] = FileStat(st.st_size, st.st_mtime_ns, language)


def _list(
    folder: str, rel_dir: str, rules: IgnoreRules, layers: tuple[Layer, ...], result: ScanResult
) -> tuple[list[str], list[str], bool, bool]:
    """(file names, subdirectory names, has .gitignore, listed) of one directory,
    without what the ignore rules leave out."""
    try:
        entries = list(os.scandir(folder))
    except OSError as exc:
        result.problems.append(f"{rel_dir or '.'}: cannot list ({exc.strerror})")
        return [], [], False, False
    has_gitignore = any(entry.name == ".gitignore" for entry in entries)
    layers = rules.layers_for(rel_dir, layers, has_gitignore)
    names: list[str] = []
    subdirs: list[str] = []
    for entry in entries:
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        try:
            # A link is kept as a name whatever it points at: its target can change (or
            # appear) without its directory's mtime moving, so each scan stats it, and
            # links to directories (never followed) or to nothing are dropped there.
            is_dir = not entry.is_symlink() and entry.is_dir(follow_symlinks=False)
        except OSError:
            continue  # vanished meanwhile
        if entry.name in ALWAYS_IGNORED or (layers and rules.is_ignored(rel, is_dir, layers)):
            continue
        (subdirs if is_dir else names).append(entry.name)
    return names, subdirs, has_gitignore, True
