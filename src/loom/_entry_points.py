"""Installed distributions' entry points, read once for every group, and kept between
processes.

`importlib.metadata.entry_points(group=...)` reads every distribution's
entry_points.txt on each call (~4 ms with 120 distributions installed; the first read
of a process ~60 ms), and a session's start asks for several groups (`loom.tools`,
`loom.providers`, `loom.node_types`, ...), as does every `loom map`. One scan answers them
all, and its answer is saved in Loom's cache folder, for as long as the stamp is the
same: `sys.path`, each folder's modification time (installing or removing a distribution
adds or takes away a dist-info folder) and each distribution's entry_points.txt (its
modification time and size: a plugin edited in place). Reading the stamp costs one listing
per `sys.path` folder and one `stat` per distribution, ~1 ms.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import marshal
import os
import re
import sys
import threading
from pathlib import Path
from typing import Any, NamedTuple

_lock = threading.Lock()
_Stamp = tuple[tuple[str, int | None, tuple[tuple[str, int, int], ...]], ...]
_FORMAT = 2
_CACHE_NAME = "entry-points.marshal"
# `module.sub:attr.sub [extra]`, as importlib.metadata.EntryPoint reads a value
_VALUE = re.compile(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")


class Distribution(NamedTuple):
    name: str
    version: str


class EntryPoint(NamedTuple):
    """An entry point as importlib.metadata gives it (name, value, group, dist, load()),
    without importing importlib.metadata (~60 ms) when the saved answer stands."""

    name: str
    value: str
    group: str
    dist: Distribution | None

    def load(self) -> Any:
        match = _VALUE.match(self.value)
        if match is None:
            raise ValueError(f"entry point {self.name}: {self.value!r} is not module:attribute")
        module = importlib.import_module(match.group("module"))
        attrs = filter(None, (match.group("attr") or "").split("."))
        return functools.reduce(getattr, attrs, module)


_Groups = dict[str, list[EntryPoint]]
_scanned: tuple[_Stamp, _Groups] | None = None


def entry_points(group: str) -> list[EntryPoint]:
    """The entry points of `group`, as `importlib.metadata.entry_points(group=group)`."""
    global _scanned
    stamp = _path_stamp()
    with _lock:  # the provider's worker thread asks too
        if _scanned is None or _scanned[0] != stamp:
            groups = _load_saved(stamp)
            if groups is None:
                groups = _read_installed()
                _save(stamp, groups)
            _scanned = (stamp, groups)
        return list(_scanned[1].get(group, ()))


def _read_installed() -> _Groups:
    from importlib import metadata

    everything = metadata.entry_points()  # one read of every distribution
    groups: _Groups = {}
    for group in everything.groups:
        for point in everything.select(group=group):
            dist = getattr(point, "dist", None)
            owner = Distribution(str(dist.name), str(dist.version)) if dist is not None else None
            groups.setdefault(group, []).append(EntryPoint(point.name, point.value, group, owner))
    return groups


def _path_stamp() -> _Stamp:
    """sys.path with each folder's modification time and its distributions'
    entry_points.txt (name, modification time, size)."""
    stamps: list[tuple[str, int | None, tuple[tuple[str, int, int], ...]]] = []
    for entry in sys.path:
        folder = entry or "."
        try:
            mtime: int | None = os.stat(folder).st_mtime_ns
        except OSError:
            stamps.append((entry, None, ()))
            continue
        stamps.append((entry, mtime, _entry_point_files(folder)))
    return tuple(stamps)


def _entry_point_files(folder: str) -> tuple[tuple[str, int, int], ...]:
    found: list[tuple[str, int, int]] = []
    try:
        with os.scandir(folder) as entries:
            names = [e.name for e in entries if e.name.endswith((".dist-info", ".egg-info"))]
    except OSError:  # a zip file or an unreadable folder: its mtime stands for it
        return ()
    for name in sorted(names):
        try:
            st = os.stat(os.path.join(folder, name, "entry_points.txt"))
        except OSError:
            continue
        found.append((name, st.st_mtime_ns, st.st_size))
    return tuple(found)


def _cache_file() -> Path | None:
    try:
        from loom.paths import LoomPaths

        return LoomPaths.from_env().cache / _CACHE_NAME
    except Exception:  # an unusable home: no saved answer, the scan still works
        return None


def _load_saved(stamp: _Stamp) -> _Groups | None:
    path = _cache_file()
    if path is None:
        return None
    try:
        saved = marshal.loads(path.read_bytes())
        form, saved_stamp, plain = saved
        if form != _FORMAT or saved_stamp != stamp:
            return None
        return {
            group: [
                EntryPoint(name, value, group, Distribution(*dist) if dist else None)
                for name, value, dist in points
            ]
            for group, points in plain.items()
        }
    except (OSError, EOFError, ValueError, TypeError):
        return None  # missing, from another version or damaged: scan again


def _save(stamp: _Stamp, groups: _Groups) -> None:
    """Atomic replace; a failure only means the next process scans again."""
    path = _cache_file()
    if path is None:
        return
    plain = {
        group: [(p.name, p.value, tuple(p.dist) if p.dist else None) for p in points]
        for group, points in groups.items()
    }
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(marshal.dumps((_FORMAT, stamp, plain)))
        os.replace(tmp, path)
    except (OSError, ValueError):
        with contextlib.suppress(OSError):
            tmp.unlink()
