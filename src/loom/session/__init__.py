"""Sessions: the agent loop behind every face (seed 001's Session and Manager API).

    from loom.session import SessionManager
    manager = SessionManager(provider_factory=..., policy_factory=...)
    session = await manager.start_session(project_path=".", tools=registry)
    unsubscribe = session.subscribe(print)
    answer = await session.send_message("explain main.py")

Heavy modules (providers, tools) are imported where they are used.
"""

from loom.session.bus import EventBus, Subscription
from loom.session.context import BuiltContext, ContextBudget, ContextWindow
from loom.session.manager import DEFAULT_MODEL, SessionManager, SessionNotFound
from loom.session.options import SessionOptions
from loom.session.permission_gate import NoPendingPermission
from loom.session.session import Session, TurnError

__all__ = [
    "DEFAULT_MODEL",
    "BuiltContext",
    "ContextBudget",
    "ContextWindow",
    "EventBus",
    "NoPendingPermission",
    "Session",
    "SessionManager",
    "SessionNotFound",
    "SessionOptions",
    "Subscription",
    "TurnError",
]
