"""Processes a test looks for by their command line."""

from __future__ import annotations

from pathlib import Path


def alive(marker: str) -> list[int]:
    """Processes whose command line names `marker` (a unique sleep length)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in cmdline and "pytest" not in cmdline:
            found.append(int(entry.name))
    return found
