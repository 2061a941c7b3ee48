"""What a person sees while the first `loom list` indexes a big history.

In a terminal: a rich progress bar with the count, the rate and the time left. Piped:
one line when it starts and one with the count and rate when it ends (no bar codes in
logs). Rich is imported only when there is that much to index.
"""

from __future__ import annotations

import sys
import time
from typing import Any

_WORDING = {
    # what: (the piped start line, the bar's title, what was done, unit)
    "thread files": (
        "indexing {total} thread files for search (once)",
        "indexing thread files (once)",
        "{done} thread files",
        "files",
    ),
    "messages for search": (
        "indexing the messages of {total} threads for search (once)",
        "indexing messages for search",
        "the messages of {done} threads",
        "threads",
    ),
}


class IndexProgress:
    """`progress(done, total)` for loom.store.index_sync (`what="thread files"`) or
    loom.store.index_messages (`what="messages for search"`); `close()` when it ends."""

    def __init__(self, stream: Any = None, what: str = "thread files") -> None:
        self.stream = stream or sys.stderr
        self._start_line, self._title, self._done_line, self._unit = _WORDING[what]
        self._bar: Any = None
        self._task: Any = None
        self._started = 0.0
        self._total = 0
        self._done = 0

    def __call__(self, done: int, total: int) -> None:
        if self._started == 0.0:
            self._start(total)
        self._done = done
        if self._bar is not None:
            rate = done / max(time.monotonic() - self._started, 1e-6)
            self._bar.update(self._task, completed=done, rate=f"{rate:.0f} {self._unit}/s")

    def _start(self, total: int) -> None:
        self._started = time.monotonic()
        self._total = total
        if not self.stream.isatty():
            self.stream.write(f"loom: {self._start_line.format(total=total)}…\n")
            self.stream.flush()
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        self._bar = Progress(
            TextColumn(self._title),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeRemainingColumn(),
            console=Console(file=self.stream),
            transient=True,
        )
        self._bar.start()
        self._task = self._bar.add_task("index", total=total, rate="")

    def close(self) -> None:
        if self._started == 0.0:
            return
        elapsed = max(time.monotonic() - self._started, 1e-6)
        if self._bar is not None:
            self._bar.stop()
        self.stream.write(
            f"loom: indexed {self._done_line.format(done=self._done)} in {elapsed:.1f} s "
            f"({self._done / elapsed:.0f} {self._unit}/s)\n"
        )
        self.stream.flush()
