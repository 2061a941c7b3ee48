"""Keeping the checkpoint stores small: `loom checkpoints gc`, the automatic daily gc
([checkpoints] keep_days), and the size `loom doctor` reports."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

AUTO_GC_EVERY_SECONDS = 86400.0
STAMP = "last-gc"


@dataclass(frozen=True)
class StoreUsage:
    folder: Path
    projects: int
    size_bytes: int


def checkpoints_folder() -> Path:
    from loom.paths import LoomPaths

    return LoomPaths.from_env().data / "checkpoints"


def checkpoint_usage() -> StoreUsage:
    """How much room every project's checkpoint store takes."""
    from loom.checkpoints import CheckpointStore

    folder = checkpoints_folder()
    stores = [p for p in folder.iterdir() if p.is_dir()] if folder.is_dir() else []
    total = sum(CheckpointStore(Path("."), p).size_bytes() for p in stores)
    return StoreUsage(folder, len(stores), total)


def collect_checkpoint_garbage(
    config: Any, keep_days: float | None = None, every_project: bool = False
):
    """Forget checkpoints older than `keep_days` (default [checkpoints] keep_days) in
    this project's store, or in every project's; returns the GcReports by folder."""
    from loom.checkpoints import CheckpointStore

    days = config.checkpoints.keep_days if keep_days is None else keep_days
    if every_project:
        folder = checkpoints_folder()
        stores = (
            [CheckpointStore(Path("."), p) for p in sorted(folder.iterdir()) if p.is_dir()]
            if folder.is_dir()
            else []
        )
    else:
        stores = [
            CheckpointStore.for_project(config.project_root, checkpoints_folder().parent, config)
        ]
    reports = {}
    for store in stores:
        if (store.dir / "git" / "HEAD").exists():
            reports[store.dir] = store.gc(days)
            (store.dir / STAMP).write_text(str(time.time()))
    return reports


def maybe_auto_gc(store: Any, keep_days: float) -> None:
    """At most once a day per store, in the background: drop checkpoints past keep_days."""
    stamp = store.dir / STAMP
    try:
        if time.time() - stamp.stat().st_mtime < AUTO_GC_EVERY_SECONDS:
            return
    except FileNotFoundError:
        if not (store.dir / "git" / "HEAD").exists():
            return  # a new store has nothing to collect
    except OSError:
        return

    def run() -> None:
        try:
            store.gc(keep_days)
            stamp.write_text(str(time.time()))
        except Exception as exc:  # housekeeping must never disturb a session
            log.warning("checkpoint gc in %s failed: %s", store.dir, exc)

    threading.Thread(target=run, name="loom-checkpoint-gc", daemon=True).start()
