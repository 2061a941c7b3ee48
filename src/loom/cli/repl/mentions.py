"""Tab completion of `@path` in the REPL, from the files the repo index sees."""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from loom.core.text import visible  # a repository's file names: shown as text

REFRESH_SECONDS = 5.0
MAX_SHOWN = 50


class MentionCompleter(Completer):
    def __init__(self, project_root: Path) -> None:
        self.root = project_root
        self._files: list[str] = []
        self._dirs: list[str] = []
        self._listed_at = 0.0

    def _paths(self) -> tuple[list[str], list[str]]:
        if time.monotonic() - self._listed_at > REFRESH_SECONDS:
            from loom.session import project_files

            try:
                self._files = project_files(self.root)
            except Exception:  # a listing problem just means no completions
                self._files = []
            parents: set[str] = set()
            for path in self._files:
                parts = path.split("/")[:-1]
                parents.update("/".join(parts[:n]) + "/" for n in range(1, len(parts) + 1))
            self._dirs = sorted(parents)
            self._listed_at = time.monotonic()
        return self._files, self._dirs

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        word = document.get_word_before_cursor(WORD=True)
        if not word.startswith("@"):
            return
        typed = word[1:]
        files, dirs = self._paths()
        lowered = typed.lower()
        starts = [p for p in (*dirs, *files) if p.lower().startswith(lowered)]
        inside = [p for p in files if lowered and lowered in p.lower() and p not in starts]
        for path in (starts + inside)[:MAX_SHOWN]:
            yield Completion("@" + path, start_position=-len(word), display=visible(path))
