"""Installed distributions' entry points, read once for every group.

`importlib.metadata.entry_points(group=...)` reads every distribution's
entry_points.txt on each call (~4 ms with 120 distributions installed), and a session's
start asks for several groups (`loom.tools`, `loom.providers`, `loom.node_types`, ...).
One scan answers them all for as long as `sys.path` and the folders on it are unchanged:
a plugin installed meanwhile (a new dist-info folder) is seen by the next call.
"""

from __future__ import annotations

import os
import sys
import threading
from importlib import metadata

_lock = threading.Lock()
_Stamp = tuple[tuple[str, int | None], ...]
_scanned: tuple[_Stamp, dict[str, list[metadata.EntryPoint]]] | None = None


def entry_points(group: str) -> list[metadata.EntryPoint]:
    """The entry points of `group`, as `importlib.metadata.entry_points(group=group)`."""
    global _scanned
    stamp = _path_stamp()
    with _lock:  # the provider's worker thread asks too
        if _scanned is None or _scanned[0] != stamp:
            everything = metadata.entry_points()  # one read of every distribution
            groups = {name: list(everything.select(group=name)) for name in everything.groups}
            _scanned = (stamp, groups)
        return list(_scanned[1].get(group, ()))


def _path_stamp() -> _Stamp:
    """sys.path with each folder's modification time: installing a distribution adds a
    folder (its dist-info) to one of them."""
    stamps: list[tuple[str, int | None]] = []
    for entry in sys.path:
        try:
            stamps.append((entry, os.stat(entry or ".").st_mtime_ns))
        except OSError:
            stamps.append((entry, None))
    return tuple(stamps)
