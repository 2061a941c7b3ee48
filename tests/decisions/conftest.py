"""A recorder over a real loom.db and thread folder in tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest

from loom.core.thread import Thread
from loom.decisions.recorder import DecisionRecorder
from loom.store.serialize import thread_to_bytes


class Project:
    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "proj"
        self.root.mkdir()
        self.threads = tmp_path / "data" / "threads"
        self.threads.mkdir(parents=True)
        self.database = tmp_path / "data" / "loom.db"

    def recorder(self, thread: Thread | None = None) -> DecisionRecorder:
        thread = thread or Thread.new(workspace_root=str(self.root))
        return DecisionRecorder(thread=thread, database=self.database, threads_dir=self.threads)

    def save(self, thread: Thread) -> None:
        (self.threads / f"{thread.id}.json").write_bytes(thread_to_bytes(thread))


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)
