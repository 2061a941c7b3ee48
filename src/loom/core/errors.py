"""LoomError: the root of every error a person sees.

Each one says what went wrong and what to do next; faces print `str(error)` (the CLI as
one `loom: error: ...` line) and never a traceback. Subclasses also derive from the
builtin they replace (LookupError, ValueError, ...) so older `except` clauses still hold.

    raise SetupError("no API key for openai", "set OPENAI_API_KEY or [providers.openai]")

This module imports nothing: `loom list` reaches it on its fast path.
"""

from __future__ import annotations


class LoomError(Exception):
    """An error for a person: `what` happened, and (when known) `todo`, what to do."""

    def __init__(self, what: str, todo: str | None = None) -> None:
        self.what = what
        self.todo = todo
        super().__init__(f"{what}; {todo}" if todo else what)


class SetupError(LoomError, ValueError):
    """A session cannot start (bad model name, missing key, unknown thread, bad rule)."""


class NotFound(LoomError, LookupError):
    """What was asked for does not exist (a thread, a session, a grant)."""


class Busy(LoomError, RuntimeError):
    """Someone else is using it (another process writes the thread)."""


class BadInput(LoomError, ValueError):
    """An argument or a file is malformed; the message says what shape is expected."""


class Unavailable(LoomError):
    """A service (sync server, language server) cannot be reached or refused us."""
