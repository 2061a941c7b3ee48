"""Sessions and the Workspace: the one front door every face holds.

    from loom.session import Workspace, SessionSpec, LoomError
    ws = Workspace.open(cwd=Path.cwd())
    session = await ws.start_session(SessionSpec(model="openai:gpt-5"))
    unsubscribe = session.subscribe(print)
    answer = await session.send_message("explain main.py")
    await ws.shutdown()

Faces (cli, web, mcp, acp) import only the names below (`__all__`); the architecture
test keeps it so. Inside, the package has four floors, each importing only the ones
before it:

    runtime/    one conversation running: Session, the model call, tool runner,
                permission gate, context window, compaction, saver, event bus
    assembly/   what a session is assembled from: providers, tool set, permission
                policy, sandbox, MCP servers, the decision-graph hook
    workspace/  the Workspace (the one assembly path), its sub-APIs, SessionSpec
    helpers/    what faces call beside a session: approval view, undo, look-ups, ...

Names resolve on first use (PEP 562), so `import loom.session` costs nothing and the
fast paths (`loom list`, `loom map`) import only the small modules they need.
"""

from __future__ import annotations

from loom._lazy import lazy_attributes as _lazy_attributes

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: `loom list` must not import typing
if TYPE_CHECKING:
    from loom.checkpoints.maintenance import checkpoint_usage, collect_checkpoint_garbage
    from loom.core.errors import BadInput, Busy, LoomError, NotFound, SetupError, Unavailable
    from loom.decisions.titles import SHOW_WIDTH, cut_note, one_line
    from loom.llm.effort import EFFORTS, check_effort
    from loom.project_files import (
        OutsideProject,
        not_a_project,
        project_text_files,
        read_project_text,
    )
    from loom.session.assembly.plugins import PLUGIN_GROUPS
    from loom.session.assembly.sandboxing import SandboxReport, sandbox_report
    from loom.session.helpers.approval import (
        approval_view,
        edit_diff,
        grant_words,
        prefix_refusal,
        present_call,
        read_text,
    )
    from loom.session.helpers.changes import (
        changes_since,
        changes_since_start,
        texts_before_edits,
    )
    from loom.session.helpers.lookup import (
        RecentThread,
        model_names,
        newest_thread_in,
        recent_threads,
    )
    from loom.session.helpers.mcp_admin import (
        McpAdminError,
        add_mcp_server,
        approve_project_mcp_server,
        find_mcp_server,
        probe_mcp_servers,
        remove_mcp_server,
        unapproved_mcp_servers,
    )
    from loom.session.helpers.tool_access import ToolAccess
    from loom.session.helpers.undo import (
        HandEdited,
        list_user_turns,
        restore_in_session,
        restore_saved_thread,
        rewind_in_session,
    )
    from loom.session.helpers.usage import (
        SessionUsage,
        price_known,
        session_cost,
        session_usage,
    )
    from loom.session.runtime.bus import EventBus, Subscription
    from loom.session.runtime.compaction import compact_now
    from loom.session.runtime.context import BuiltContext, ContextBudget, ContextWindow
    from loom.session.runtime.context_view import ContextPart, ContextView
    from loom.session.runtime.file_peek import PeekError, peek
    from loom.session.runtime.mentions import project_files
    from loom.session.runtime.options import SessionOptions
    from loom.session.runtime.permission_gate import NoPendingPermission
    from loom.session.runtime.repo_map import repointel_hook
    from loom.session.runtime.session import Session, TurnError
    from loom.session.workspace.repo_api import RepoApi
    from loom.session.workspace.spec import McpServerAsk
    from loom.session.workspace.thread_home import thread_project
    from loom.session.workspace.workspace import ActiveSession, SessionSpec, Workspace
    from loom.session.workspace.worktrees_api import WorktreesApi
    from loom.store.family import family_rows
    from loom.store.index_fresh import answer_from_index, has_search_words
    from loom.tools.presentation import EditPreview, ToolPresentation

_EXPORTS = {  # name -> the module that defines it
    # errors every face catches
    "BadInput": "loom.core.errors",
    "Busy": "loom.core.errors",
    "LoomError": "loom.core.errors",
    "NotFound": "loom.core.errors",
    "SetupError": "loom.core.errors",
    "Unavailable": "loom.core.errors",
    # the Workspace and what a face asks of it
    "ActiveSession": "loom.session.workspace.workspace",
    "SessionSpec": "loom.session.workspace.workspace",
    "Workspace": "loom.session.workspace.workspace",
    "McpServerAsk": "loom.session.workspace.spec",
    "RepoApi": "loom.session.workspace.repo_api",
    "WorktreesApi": "loom.session.workspace.worktrees_api",
    # a running session
    "Session": "loom.session.runtime.session",
    "TurnError": "loom.session.runtime.session",
    "EventBus": "loom.session.runtime.bus",
    "Subscription": "loom.session.runtime.bus",
    "BuiltContext": "loom.session.runtime.context",
    "ContextBudget": "loom.session.runtime.context",
    "ContextWindow": "loom.session.runtime.context",
    "ContextPart": "loom.session.runtime.context_view",
    "ContextView": "loom.session.runtime.context_view",
    "SessionOptions": "loom.session.runtime.options",
    "NoPendingPermission": "loom.session.runtime.permission_gate",
    "compact_now": "loom.session.runtime.compaction",
    "PeekError": "loom.session.runtime.file_peek",
    "peek": "loom.session.runtime.file_peek",
    "project_files": "loom.session.runtime.mentions",
    "repointel_hook": "loom.session.runtime.repo_map",
    # what faces call beside a session
    "approval_view": "loom.session.helpers.approval",
    "edit_diff": "loom.session.helpers.approval",
    "present_call": "loom.session.helpers.approval",
    "EditPreview": "loom.tools.presentation",
    "ToolPresentation": "loom.tools.presentation",
    "grant_words": "loom.session.helpers.approval",
    "prefix_refusal": "loom.session.helpers.approval",
    "read_text": "loom.session.helpers.approval",
    "HandEdited": "loom.session.helpers.undo",
    "list_user_turns": "loom.session.helpers.undo",
    "restore_in_session": "loom.session.helpers.undo",
    "restore_saved_thread": "loom.session.helpers.undo",
    "rewind_in_session": "loom.session.helpers.undo",
    "RecentThread": "loom.session.helpers.lookup",
    "model_names": "loom.session.helpers.lookup",
    "newest_thread_in": "loom.session.helpers.lookup",
    "recent_threads": "loom.session.helpers.lookup",
    # the project a thread works in: its Workspace governs it (issue 34)
    "thread_project": "loom.session.workspace.thread_home",
    "SessionUsage": "loom.session.helpers.usage",
    "session_usage": "loom.session.helpers.usage",
    "session_cost": "loom.session.helpers.usage",
    "price_known": "loom.session.helpers.usage",
    "changes_since": "loom.session.helpers.changes",
    "changes_since_start": "loom.session.helpers.changes",
    "texts_before_edits": "loom.session.helpers.changes",
    "ToolAccess": "loom.session.helpers.tool_access",
    "McpAdminError": "loom.session.helpers.mcp_admin",
    "add_mcp_server": "loom.session.helpers.mcp_admin",
    "approve_project_mcp_server": "loom.session.helpers.mcp_admin",
    "find_mcp_server": "loom.session.helpers.mcp_admin",
    "probe_mcp_servers": "loom.session.helpers.mcp_admin",
    "remove_mcp_server": "loom.session.helpers.mcp_admin",
    "unapproved_mcp_servers": "loom.session.helpers.mcp_admin",
    "PLUGIN_GROUPS": "loom.session.assembly.plugins",
    "SandboxReport": "loom.session.assembly.sandboxing",
    "sandbox_report": "loom.session.assembly.sandboxing",
    "checkpoint_usage": "loom.checkpoints.maintenance",
    # a decision's title on one short line (`loom decisions`)
    "SHOW_WIDTH": "loom.decisions.titles",
    "cut_note": "loom.decisions.titles",
    "one_line": "loom.decisions.titles",
    "collect_checkpoint_garbage": "loom.checkpoints.maintenance",
    # a project's own text files, read confined to it; what is not a project (issue 19)
    "OutsideProject": "loom.project_files",
    "not_a_project": "loom.project_files",
    "project_text_files": "loom.project_files",
    "read_project_text": "loom.project_files",
    # `loom list` / `loom search` before anything else is imported (stdlib only)
    "answer_from_index": "loom.store.index_fresh",
    "has_search_words": "loom.store.index_fresh",
    "family_rows": "loom.store.family",  # `loom list --tree`, the same way
    "EFFORTS": "loom.llm.effort",  # --effort, /effort, an agent's `effort:`
    "check_effort": "loom.llm.effort",
}

__all__ = [
    "EFFORTS",
    "PLUGIN_GROUPS",
    "SHOW_WIDTH",
    "ActiveSession",
    "BadInput",
    "BuiltContext",
    "Busy",
    "ContextBudget",
    "ContextPart",
    "ContextView",
    "ContextWindow",
    "EditPreview",
    "EventBus",
    "HandEdited",
    "LoomError",
    "McpAdminError",
    "McpServerAsk",
    "NoPendingPermission",
    "NotFound",
    "OutsideProject",
    "PeekError",
    "RecentThread",
    "RepoApi",
    "SandboxReport",
    "Session",
    "SessionOptions",
    "SessionSpec",
    "SessionUsage",
    "SetupError",
    "Subscription",
    "ToolAccess",
    "ToolPresentation",
    "TurnError",
    "Unavailable",
    "Workspace",
    "WorktreesApi",
    "add_mcp_server",
    "answer_from_index",
    "approval_view",
    "approve_project_mcp_server",
    "changes_since",
    "changes_since_start",
    "check_effort",
    "checkpoint_usage",
    "collect_checkpoint_garbage",
    "compact_now",
    "cut_note",
    "edit_diff",
    "family_rows",
    "find_mcp_server",
    "grant_words",
    "has_search_words",
    "list_user_turns",
    "model_names",
    "newest_thread_in",
    "not_a_project",
    "one_line",
    "peek",
    "prefix_refusal",
    "present_call",
    "price_known",
    "probe_mcp_servers",
    "project_files",
    "project_text_files",
    "read_project_text",
    "read_text",
    "recent_threads",
    "remove_mcp_server",
    "repointel_hook",
    "restore_in_session",
    "restore_saved_thread",
    "rewind_in_session",
    "sandbox_report",
    "session_cost",
    "session_usage",
    "texts_before_edits",
    "thread_project",
    "unapproved_mcp_servers",
]


__getattr__ = _lazy_attributes(__name__, _EXPORTS, globals())
