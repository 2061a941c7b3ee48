"""LocalThreadStore: one pretty-printed JSON file per thread, written atomically.

SKELETON: save/load work; the index, list, search, soft delete, quarantine and the
writer lock are filled in by the threads issue. Keep the public method names.
"""

from __future__ import annotations

from pathlib import Path

from loom.core.thread import Thread
from loom.paths import LoomPaths
from loom.store.atomic import atomic_write_bytes
from loom.store.base import ThreadSummary


class LocalThreadStore:
    def __init__(self, paths: LoomPaths | None = None) -> None:
        self.paths = paths or LoomPaths.from_env()

    @property
    def threads_dir(self) -> Path:
        return self.paths.threads_dir

    def path_for(self, thread_id: str) -> Path:
        return self.threads_dir / f"{thread_id}.json"

    def save(self, thread: Thread) -> None:
        self.threads_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(self.path_for(thread.id), thread.to_json().encode())

    def load(self, thread_id: str) -> Thread | None:
        path = self.path_for(thread_id)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        return Thread.from_json(data)

    def list(self, limit: int = 50) -> list[ThreadSummary]:
        raise NotImplementedError

    def save_and_sync(self, thread: Thread) -> None:
        self.save(thread)
