"""LoomError: the root of every error a person sees.

Each one says what went wrong and what to do next; faces print `str(error)` (the CLI as
one `loom: error: ...` line) and never a traceback. Subclasses also derive from the
builtin they replace (LookupError, ValueError, ...) so older `except` clauses still hold.

    raise SetupError("no API key for openai", "set OPENAI_API_KEY or [providers.openai]")

Everything a face (cli, web, acp, `loom mcp serve`) may catch is one of these. The tree
(a subclass indented under its parent; a builtin base in brackets; where it lives):

    LoomError
        SetupError [ValueError]
        NotFound [LookupError]
            ThreadNotFound                      store/base.py
            AmbiguousThreadId                   store/base.py
            NoPendingPermission                 session/runtime/permission_gate.py
            PageNotFound                        web/state.py
        Busy [RuntimeError]
            ThreadLocked                        store/base.py
        BadInput [ValueError]
            ThreadUnreadable                    store/base.py
            ImageError                          core/images.py
            MentionError                        session/runtime/mentions.py
            PeekError                           session/runtime/file_peek.py
            BadBody                             web/api.py
            ProjectPathError                    web/project.py
        Unavailable
        ConfigError                             config.py
        OutsideProject [OSError]                project_files.py
        CheckpointError                         checkpoints/_git.py
            NothingToRestore                    session/helpers/rewind.py
            HandEdited                          session/helpers/rewind.py
        CompactionError                         session/runtime/compaction.py
        TurnError [RuntimeError]                session/runtime/ports.py
        McpAdminError                           session/helpers/mcp_admin.py
        RestoreError                            store/doctor.py
        StartFailed                             cli/repl/starter.py
        BindError [OSError]                     web/server.py
        IdentityError [ValueError]              server/identity.py
        DatabaseNotMigrated [RuntimeError]      server/migrate.py

Other exception classes under `src/loom` stay inside their package (a tool's `ToolError`
becomes an error result, an `LlmError` a `SetupError` or an error event, a `StorageError`
a `LoomError` in `ThreadsApi`); `tests/core/test_errors_tree.py` lists each and says
where it is caught, and keeps this tree true.

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
