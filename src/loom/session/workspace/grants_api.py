"""`Workspace.grants`: the saved `allow_always` permission grants (list, revoke).

`project=None` means every project's grants (what `loom permissions list` shows);
a database that does not exist yet simply has no grants.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from loom.core.errors import BadInput, LoomError, NotFound

if TYPE_CHECKING:
    from loom.paths import LoomPaths
    from loom.permissions import Grant, GrantStore


class GrantsApi:
    def __init__(self, paths: LoomPaths) -> None:
        self.paths = paths

    @property
    def database(self) -> Path:
        return self.paths.database

    def list(self, project: Path | None = None) -> list[Grant]:
        store = self._store(project)
        if not self.database.exists():
            return []
        with self._readable():
            return store.list()

    def revoke(self, grant_id: int | str) -> Grant:
        """Revoke one grant by its id; NotFound when no grant has it."""
        text = str(grant_id).strip()
        if not text.isdigit():
            raise BadInput(
                f"{grant_id!r} is not a grant id",
                "ids are numbers, shown by `loom permissions list`",
            )
        missing = NotFound(
            f"no saved grant has id {text}", "run `loom permissions list` to see the ids"
        )
        if not self.database.exists():
            raise missing
        store = self._store(None)
        with self._readable():
            grant = store.get(int(text))
            if grant is None or not store.revoke(grant.id):
                raise missing
        return grant

    def revoke_all(self, project: Path | None = None) -> int:
        """Revoke every grant (of `project` when given); returns how many."""
        store = self._store(project)
        if not self.database.exists():
            return 0
        with self._readable():
            return store.revoke_all()

    def _store(self, project: Path | None) -> GrantStore:
        from loom.permissions import GrantStore

        if project is not None and not project.is_dir():
            raise BadInput(f"{project} is not a folder", "pass a project folder to --project")
        return GrantStore(project, database=self.database)

    @contextlib.contextmanager
    def _readable(self) -> Iterator[None]:
        try:
            yield
        except (sqlite3.Error, OSError) as exc:
            raise LoomError(
                f"cannot read the permission grants in {self.database}: {exc}",
                "check that the file is readable (or move it away to start with no grants)",
            ) from exc
