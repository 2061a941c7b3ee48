"""Sessions and the Workspace: the one front door every face holds.

    from loom.session import Workspace, SessionSpec, LoomError
    ws = Workspace.open(cwd=Path.cwd())
    session = await ws.start_session(SessionSpec(model="openai:gpt-5"))
    unsubscribe = session.subscribe(print)
    answer = await session.send_message("explain main.py")
    await ws.shutdown()

Names resolve on first use (PEP 562), so `import loom.session` costs nothing and the
fast paths (`loom list`, `loom map`) import only the small modules they need.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: `loom list` must not import typing
if TYPE_CHECKING:
    from loom.core.errors import BadInput, Busy, LoomError, NotFound, SetupError, Unavailable
    from loom.session.bus import EventBus, Subscription
    from loom.session.changes import changes_since, changes_since_start
    from loom.session.context import BuiltContext, ContextBudget, ContextWindow
    from loom.session.manager import DEFAULT_MODEL, SessionManager, SessionNotFound
    from loom.session.options import SessionOptions
    from loom.session.permission_gate import NoPendingPermission
    from loom.session.repo_api import RepoApi
    from loom.session.session import Session, TurnError
    from loom.session.spec import McpServerAsk
    from loom.session.tool_access import ToolAccess
    from loom.session.workspace import ActiveSession, SessionSpec, Workspace
    from loom.session.worktrees_api import WorktreesApi

_EXPORTS = {
    "ActiveSession": "loom.session.workspace",
    "BadInput": "loom.core.errors",
    "BuiltContext": "loom.session.context",
    "Busy": "loom.core.errors",
    "ContextBudget": "loom.session.context",
    "ContextWindow": "loom.session.context",
    "changes_since": "loom.session.changes",
    "changes_since_start": "loom.session.changes",
    "DEFAULT_MODEL": "loom.session.manager",
    "EventBus": "loom.session.bus",
    "LoomError": "loom.core.errors",
    "McpServerAsk": "loom.session.spec",
    "NoPendingPermission": "loom.session.permission_gate",
    "NotFound": "loom.core.errors",
    "RepoApi": "loom.session.repo_api",
    "Session": "loom.session.session",
    "SessionManager": "loom.session.manager",
    "SessionNotFound": "loom.session.manager",
    "SessionOptions": "loom.session.options",
    "SessionSpec": "loom.session.workspace",
    "SetupError": "loom.core.errors",
    "Subscription": "loom.session.bus",
    "ToolAccess": "loom.session.tool_access",
    "TurnError": "loom.session.session",
    "Unavailable": "loom.core.errors",
    "Workspace": "loom.session.workspace",
    "WorktreesApi": "loom.session.worktrees_api",
}

__all__ = [
    "DEFAULT_MODEL",
    "ActiveSession",
    "BadInput",
    "BuiltContext",
    "Busy",
    "ContextBudget",
    "ContextWindow",
    "EventBus",
    "LoomError",
    "McpServerAsk",
    "NoPendingPermission",
    "NotFound",
    "RepoApi",
    "Session",
    "SessionManager",
    "SessionNotFound",
    "SessionOptions",
    "SessionSpec",
    "SetupError",
    "Subscription",
    "ToolAccess",
    "TurnError",
    "Unavailable",
    "Workspace",
    "WorktreesApi",
    "changes_since",
    "changes_since_start",
]


def __getattr__(name: str) -> object:
    from importlib import import_module

    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'loom.session' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
