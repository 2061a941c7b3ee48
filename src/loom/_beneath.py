"""Open files beneath a root folder so that a symlink can never lead out of it.

Checking a path and then opening it leaves a gap: a folder on the way can be swapped
for a symlink in between. Here every component is opened relative to the previous one
(`openat`) with O_NOFOLLOW, starting from a descriptor of the root, so what is opened is
the file that path names inside the root at that moment, or nothing (`Escape`).

Callers resolve in-project symlinks first (`os.path.realpath`, checked to stay inside
the root) and pass the resolved relative path: it has no symlinks left, so any symlink
met here appeared after the check. Only the standard library: tools and repointel
both use it.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import stat

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class Escape(OSError):
    """The path met a symlink (it changed after it was checked, or leads elsewhere)."""


def inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def resolve_beneath(root: str, rel: str) -> str | None:
    """`rel` with in-project symlinks resolved, relative to the real root ("" for the
    root itself); None when it leads outside."""
    try:
        root_real = os.path.realpath(root)
        real = os.path.realpath(os.path.join(root_real, rel))
    except OSError:  # a link on the way changed while it was being resolved
        return None
    if not inside(real, root_real):
        return None
    return "" if real == root_real else os.path.relpath(real, root_real)


@functools.lru_cache(maxsize=64)
def _real_root(root: str) -> str:
    # the root is the person's project folder, not something the agent can swap
    return os.path.realpath(root)


def open_following_inside(root: str, rel: str, folders: Folders | None = None) -> int:
    """Like `open_file`, but in-project symlinks on the way are followed (once resolved,
    the walk is repeated beneath the root); Escape when they lead outside. Paths without
    links cost no `realpath`. `folders` reuses folder descriptors across many files.
    Opened non-blocking (a FIFO must not hang the reader): check `S_ISREG` after."""
    opener = folders.open if folders is not None else functools.partial(open_file, root)
    flags = os.O_RDONLY | os.O_NONBLOCK
    try:
        return opener(rel, flags)
    except Escape:
        real = resolve_beneath(root, rel)
        if not real:
            raise
        return opener(real, flags)


class Folders:
    """Folder descriptors opened beneath one root, kept for a batch of files (a folder
    walked once serves all its files: one `openat` per file). Close it, or use `with`."""

    MAX_OPEN = 128

    def __init__(self, root: str) -> None:
        self.root = root
        self._fds: dict[str, int] = {}

    def _folder(self, rel: str) -> int:
        fd = self._fds.get(rel)
        if fd is not None:
            return fd
        if len(self._fds) >= self.MAX_OPEN:
            self.close()
        if rel == "":
            fd = os.open(_real_root(self.root), _DIR_FLAGS & ~os.O_NOFOLLOW)
        else:
            parent, _, name = rel.rpartition("/")
            fd = _step(self._folder(parent), name, rel, create=False)
        self._fds[rel] = fd
        return fd

    def open(self, rel: str, flags: int = os.O_RDONLY) -> int:
        parts = _parts(rel)
        if not parts:
            raise IsADirectoryError(errno.EISDIR, "the root is a folder", rel)
        folder = self._folder("/".join(parts[:-1]))
        try:
            return os.open(parts[-1], flags | _NOFOLLOW, dir_fd=folder)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise Escape(exc.errno, "the file is a symlink", rel) from None
            raise

    def close(self) -> None:
        fds, self._fds = self._fds, {}
        for fd in fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> Folders:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _parts(rel: str) -> list[str]:
    parts = [p for p in rel.replace(os.sep, "/").split("/") if p not in ("", ".")]
    if ".." in parts:
        raise Escape(errno.EXDEV, "a path with '..' cannot be opened beneath the root", rel)
    return parts


def _step(dir_fd: int, name: str, rel: str, create: bool) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        if not create:
            raise
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o777, dir_fd=dir_fd)
        return _step(dir_fd, name, rel, create=False)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            why = "a folder on the way is a symlink or not a folder"
            raise Escape(exc.errno, why, rel) from None
        raise


def open_dir(root: str, rel: str, *, create: bool = False) -> int:
    """A descriptor of the folder `rel` beneath `root` (made, with its parents, when
    `create`). Raises Escape when a component is a symlink."""
    fd = os.open(_real_root(root), _DIR_FLAGS & ~os.O_NOFOLLOW)
    try:
        for name in _parts(rel):
            next_fd = _step(fd, name, rel, create)
            os.close(fd)
            fd = next_fd
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_file(root: str, rel: str, flags: int = os.O_RDONLY, mode: int = 0o644) -> int:
    """A descriptor of the file `rel` beneath `root`, opened with `flags`; Escape when
    any component (the file included) is a symlink."""
    parts = _parts(rel)
    if not parts:
        return open_dir(root, "")
    dir_fd = open_dir(root, "/".join(parts[:-1]))
    try:
        return os.open(parts[-1], flags | _NOFOLLOW, mode, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Escape(exc.errno, "the file is a symlink", rel) from None
        raise
    finally:
        os.close(dir_fd)


def replace_file(root: str, rel: str, data: bytes) -> bool:
    """Replace (or create) the file `rel` beneath `root` atomically and durably: a temp
    file in the same folder, fsync, rename, fsync the folder, all relative to one folder
    descriptor. Keeps an existing file's permission bits. True when it was created."""
    parts = _parts(rel)
    if not parts:
        raise IsADirectoryError(errno.EISDIR, "the project root is a folder", rel)
    dir_fd = open_dir(root, "/".join(parts[:-1]), create=True)
    name = parts[-1]
    import secrets  # here: ~5 ms of imports (random, hmac) that `loom map` never needs

    temp = f".{name}.{secrets.token_hex(4)}.loom-tmp"
    try:
        try:
            old = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            old = None
        if old is not None and stat.S_ISLNK(old.st_mode):
            raise Escape(errno.ELOOP, "the file is a symlink", rel)
        if old is not None and stat.S_ISDIR(old.st_mode):
            raise IsADirectoryError(errno.EISDIR, "it is a folder", rel)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644, dir_fd=dir_fd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if old is not None:
                os.fchmod(fd, stat.S_IMODE(old.st_mode))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        os.fsync(dir_fd)
        return old is None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)
        raise
    finally:
        os.close(dir_fd)
