"""Watch a project with watchfiles and keep its RepoIntel current.

Changes are debounced (~200 ms), filtered by the same ignore rules as the index, applied
with an incremental refresh (only changed files are re-read and re-parsed) and announced
as a `RepoUpdate` on the `repo:updates` topic through the caller's callback.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loom.ignore import IgnoreRules
from loom.repointel.service import RepoIntel
from loom.repointel.settings import RepoSettings

TOPIC = "repo:updates"
DEBOUNCE_MS = 200


@dataclass(frozen=True)
class RepoUpdate:
    project_root: str
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    topic: str = TOPIC

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "repo_update",
            "topic": self.topic,
            "project_root": self.project_root,
            "added": self.added,
            "changed": self.changed,
            "removed": self.removed,
        }


OnChange = Callable[[RepoUpdate], Any]


class RepoWatcher:
    def __init__(
        self,
        intel: RepoIntel,
        on_change: OnChange | None,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        self.intel = intel
        self.on_change = on_change
        self.loop = loop
        self.error: str | None = None
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._rules = IgnoreRules(str(intel.root), intel.settings.ignore)
        self._thread = threading.Thread(
            target=self._run, name=f"loom-watch-{intel.root.name}", daemon=True
        )

    def start(self) -> RepoWatcher:
        self.intel.refresh()
        self._thread.start()
        self._ready.wait(timeout=5)
        return self

    def _relevant(self, _change: object, path: str) -> bool:
        try:
            rel = Path(path).relative_to(self.intel.root).as_posix()
        except ValueError:
            return False
        if rel.endswith(".gitignore") or rel.endswith("info/exclude"):
            return True
        return not self._rules.path_is_ignored(rel)

    def _run(self) -> None:
        import watchfiles

        try:
            watcher = watchfiles.watch(
                self.intel.root,
                watch_filter=self._relevant,
                debounce=DEBOUNCE_MS,
                step=50,
                stop_event=self._stop,
                raise_interrupt=False,
                yield_on_timeout=True,
                rust_timeout=500,
            )
            self.intel.mark_fresh(True)
            self._ready.set()
            for changes in watcher:
                if self._stop.is_set():
                    break
                if changes:
                    self._apply(changes)
        except Exception as exc:  # the watcher must never take the session down
            self.error = f"watching {self.intel.root} stopped: {exc}"
        finally:
            self.intel.mark_fresh(False)
            self._ready.set()

    def _apply(self, changes: AbstractSet[tuple[object, str]]) -> None:
        if any(p.endswith((".gitignore", "info/exclude")) for _c, p in changes):
            self._rules = IgnoreRules(str(self.intel.root), self.intel.settings.ignore)
        stats = self.intel.refresh()
        if not stats.any_change or self.on_change is None:
            return
        update = RepoUpdate(
            str(self.intel.root), sorted(stats.added), sorted(stats.changed), sorted(stats.removed)
        )
        if self.loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                self.loop.call_soon_threadsafe(self.on_change, update)
        else:
            self.on_change(update)

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    @property
    def running(self) -> bool:
        return self._thread.is_alive()


def start_watcher(
    project_root: Path | str,
    on_change: OnChange | None = None,
    *,
    loop: asyncio.AbstractEventLoop | None = None,
    settings: RepoSettings | None = None,
) -> RepoWatcher:
    """Start watching a project (returns once the watch is live). Call `.stop()` to end it.

    `on_change` gets a RepoUpdate per debounced batch; pass `loop` to have it called on
    that event loop (e.g. `lambda u: bus.publish("repo:updates", u)`).
    """
    return RepoWatcher(RepoIntel.for_root(project_root, settings), on_change, loop).start()
