"""Checkpoints: snapshots of the project's files before the agent changes them, kept in
a private git object store (never the person's repo), and restoring them exactly."""

from loom.checkpoints._git import CheckpointError
from loom.checkpoints.store import CheckpointStore, GcReport, RestoreResult, Snapshot, project_key

__all__ = [
    "CheckpointError",
    "CheckpointStore",
    "GcReport",
    "RestoreResult",
    "Snapshot",
    "project_key",
]
