"""Walk a project: every file git would not ignore, with size, mtime and language.

Only `stat` is done here (no reads), so a warm rescan of a large tree stays cheap; files
over the size limit are left out. Directory symlinks are not followed (no loops).
"""

from __future__ import annotations

import os
import stat as stat_mod
from dataclasses import dataclass, field
from typing import NamedTuple

from loom.repointel.ignore import ALWAYS_IGNORED, DEFAULT_IGNORES, IgnoreRules, Layer
from loom.repointel.languages import detect_language

DEFAULT_MAX_FILE_BYTES = 1_000_000


class FileStat(NamedTuple):
    size: int
    mtime_ns: int
    language: str | None


@dataclass
class ScanResult:
    files: dict[str, FileStat] = field(default_factory=dict)
    too_large: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def scan_project(
    root: str,
    ignore: list[str] | tuple[str, ...] = DEFAULT_IGNORES,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
) -> ScanResult:
    rules = IgnoreRules(root, ignore)
    result = ScanResult()
    stack: list[tuple[str, tuple[Layer, ...]]] = [("", rules.root_layers)]
    while stack:
        rel_dir, layers = stack.pop()
        try:
            entries = list(os.scandir(os.path.join(root, rel_dir) if rel_dir else root))
        except OSError as exc:
            result.problems.append(f"{rel_dir or '.'}: cannot list ({exc.strerror})")
            continue
        layers = rules.layers_for(rel_dir, layers,
                                  any(entry.name == ".gitignore" for entry in entries))
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                if entry.is_symlink():
                    st = os.stat(entry.path)  # follows; ELOOP for a loop
                    if stat_mod.S_ISDIR(st.st_mode):
                        continue  # never follow directory links
                    is_dir = False
                else:
                    is_dir = entry.is_dir(follow_symlinks=False)
                    st = None if is_dir else entry.stat(follow_symlinks=False)
            except OSError:
                continue  # dangling link or a file that vanished: not part of the project
            if entry.name in ALWAYS_IGNORED or (layers and rules.is_ignored(rel, is_dir, layers)):
                continue
            if is_dir:
                stack.append((rel, layers))
                continue
            assert st is not None
            if not stat_mod.S_ISREG(st.st_mode):
                continue
            if st.st_size > max_file_bytes:
                result.too_large.append(rel)
                continue
            result.files[rel] = FileStat(st.st_size, st.st_mtime_ns, detect_language(rel))
    return result
