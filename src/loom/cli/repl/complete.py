"""Tab completion at the REPL prompt: slash commands, model names after `/model`, and
file paths (after `@`, or any word that looks like one)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from loom.core.text import visible  # a repository's file and command names: shown as text

MAX_PATHS = 200


class ReplCompleter(Completer):
    def __init__(self, repl: Any) -> None:
        self.repl = repl
        self._models: list[str] | None = None

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        text = document.text_before_cursor
        if text.startswith("/") and " " not in text:
            yield from self._commands(text)
            return
        if text.startswith("/model "):
            yield from self._model_names(text[len("/model ") :].lstrip())
            return
        word = text.split(" ")[-1] if text else ""
        if word.startswith("@") or "/" in word or "." in word:
            yield from self._paths(word)

    def _commands(self, typed: str) -> Iterable[Completion]:
        from loom.cli.repl.commands import BUILTIN

        commands = self.repl.commands
        names = commands.names() if commands is not None else list(BUILTIN)
        for name in names:
            if name.startswith(typed):
                what = BUILTIN.get(name, "custom command")
                yield Completion(name, -len(typed), display=visible(name), display_meta=what[:50])

    def _model_names(self, typed: str) -> Iterable[Completion]:
        if self._models is None:
            from loom.session import model_names

            self._models = model_names()
        for name in self._models:
            if name.startswith(typed) or name.split(":", 1)[-1].startswith(typed):
                yield Completion(name, -len(typed))

    def _paths(self, word: str) -> Iterable[Completion]:
        at = "@" if word.startswith("@") else ""
        typed = word[len(at) :]
        root = self._root()
        folder, _, stem = typed.rpartition("/")
        base = root / folder if folder else root
        try:
            entries = sorted(os.scandir(base), key=lambda e: e.name)
        except OSError:
            return
        count = 0
        for entry in entries:
            if not entry.name.startswith(stem) or (entry.name.startswith(".") and not stem):
                continue
            path = f"{folder}/{entry.name}" if folder else entry.name
            if entry.is_dir():
                path += "/"
            yield Completion(at + path, -len(word), display=visible(entry.name))
            count += 1
            if count >= MAX_PATHS:
                return

    def _root(self) -> Path:
        if self.repl.starter.ready:
            return Path(self.repl.session.project_root)
        return self.repl.starter.cwd
