"""Quarantine: unreadable thread files are moved aside with a reason, never deleted.

`data/quarantine/<file name>` holds the bytes exactly as found and
`data/quarantine/<file name>.reason.txt` says why and when. A second bad file with the
same name gets a numbered suffix, so nothing is ever overwritten.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

REASON_SUFFIX = ".reason.txt"
ORIGINAL_SUFFIX = ".before-repair"
"""Marks the original of a file Loom repaired itself: kept for reference, needs no one."""


class QuarantinedFile:
    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason

    @property
    def needs_a_person(self) -> bool:
        return not self.path.name.endswith(ORIGINAL_SUFFIX)

    def __repr__(self) -> str:
        return f"QuarantinedFile({self.path.name!r}, {self.reason!r})"


def quarantine_file(path: Path, quarantine_dir: Path, reason: str) -> Path | None:
    """Move `path` into quarantine with a reason; None if it vanished or cannot move."""
    try:
        quarantine_dir.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    target = quarantine_dir / path.name
    counter = 1
    while target.exists():
        counter += 1
        target = quarantine_dir / f"{path.name}.{counter}"
    try:
        os.rename(path, target)
    except OSError:
        return None
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with contextlib.suppress(OSError):
        Path(f"{target}{REASON_SUFFIX}").write_text(
            f"{reason}\nfound at: {path}\nmoved at: {stamp}\n"
            "The file is kept as found. Fix it by hand and move it back into the threads "
            "folder, or delete it.\n"
        )
    return target


def keep_original(path: Path, raw: bytes, quarantine_dir: Path, reason: str) -> Path | None:
    """Keep a copy of a file's bytes before Loom repairs it (never overwriting one)."""
    try:
        quarantine_dir.mkdir(parents=True, exist_ok=True)
        target = quarantine_dir / f"{path.name}{ORIGINAL_SUFFIX}"
        counter = 1
        while target.exists():
            counter += 1
            target = quarantine_dir / f"{path.name}.{counter}{ORIGINAL_SUFFIX}"
        target.write_bytes(raw)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        Path(f"{target}{REASON_SUFFIX}").write_text(
            f"repaired: {reason}\nfound at: {path}\nrepaired at: {stamp}\n"
            "This is the file as it was before the repair; the thread itself is back in "
            "the threads folder. Delete this copy when you no longer need it.\n"
        )
    except OSError:
        return None
    return target


def list_quarantined(quarantine_dir: Path) -> list[QuarantinedFile]:
    """Files in quarantine with their recorded reasons (oldest first)."""
    try:
        entries = sorted(quarantine_dir.iterdir(), key=lambda p: p.stat().st_mtime)
    except OSError:
        return []
    found = []
    for entry in entries:
        if entry.name.endswith(REASON_SUFFIX):
            continue
        try:
            reason = Path(f"{entry}{REASON_SUFFIX}").read_text().splitlines()[0]
        except (OSError, IndexError):
            reason = "(no reason recorded)"
        found.append(QuarantinedFile(entry, reason))
    return found
