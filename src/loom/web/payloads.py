"""Session events as the browser receives them: small JSON objects, with HTML fragments
rendered on the server (messages, tool cards, the permission modal, the plan) by the same
templates a page load uses."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, assert_never

from loom.core.events import (
    ArchitectPlan,
    ArchitectStep,
    BackgroundCommandChanged,
    ContextCompacted,
    ConversationRewound,
    DecisionCascade,
    FilesRestored,
    LlmRetry,
    ModeChanged,
    NewMessage,
    Notice,
    PermissionModeChanged,
    PermissionRequest,
    SessionError,
    SessionEvent,
    SessionStatus,
    SubagentMessage,
    SubagentStatus,
    SyncError,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    TodoList,
    ToolComplete,
    ToolExecuting,
    ToolProgress,
    TurnComplete,
)
from loom.web.cards import ChatItem, card_for, chat_items, disk_diff, fill_result, usage_totals
from loom.web.views import fragment

if TYPE_CHECKING:
    from loom.session import Session


class LiveSession(Protocol):
    """What payloads read of loom.web.live.LiveSession (which imports this module)."""

    session: Session
    tools: Any  # the session's ToolRegistry
    durations: dict[str, float]
    diffs: dict[str, Any]
    plan: dict[str, Any] | None

    @property
    def badge(self) -> tuple[str, str]: ...


def payload_for(live: LiveSession, event: SessionEvent) -> dict[str, Any] | None:
    """What a tab receives for `event`; None when the page shows nothing of it. Every
    event type has a case: basedpyright fails on one without (`assert_never`)."""
    match event:
        case TextDeltaEvent():
            return _delta(live, event)
        case ThinkingDeltaEvent():
            return _thinking(live, event)  # the model's reasoning, in a folded block
        case NewMessage():
            return _message(live, event)
        case SessionStatus():
            return _status(live, event)
        case ToolExecuting():
            return _tool_running(live, event)
        case ToolProgress():
            return _tool_progress(live, event)
        case ToolComplete():
            return _tool_done(live, event)
        case PermissionRequest():
            return _permission(live, event)
        case ModeChanged():
            return _mode(live, event)
        case PermissionModeChanged():
            return _permission_mode(live, event)
        case LlmRetry():
            return _retry(live, event)
        case SessionError():
            return _error(live, event)
        case SyncError():
            return _sync_error(live, event)
        case ArchitectPlan() | ArchitectStep() | TodoList():
            return _plan(live, event)  # the agent's todo list shares the plan panel
        case TurnComplete():
            return _turn_done(live, event)
        case ContextCompacted():
            return _compacted(live, event)
        case FilesRestored():
            return _restored(live, event)
        case ConversationRewound():
            return _rewound(live, event)
        case Notice():
            return _hook_notice(live, event)  # lifecycle hooks' warnings and messages
        case SubagentStatus():
            return _subagent(live, event)
        case BackgroundCommandChanged():
            return _shells(live, event)
        case DecisionCascade() | SubagentMessage():
            return None  # not shown live: a sub-agent's messages are on its own page
        case _:
            assert_never(event)


def _delta(live: LiveSession, event: TextDeltaEvent) -> dict[str, Any]:
    return {"type": "delta", "text": event.text}


def _thinking(live: LiveSession, event: ThinkingDeltaEvent) -> dict[str, Any]:
    return {"type": "thinking", "text": event.text}  # set as text by the page, never HTML


def _message(live: LiveSession, event: NewMessage) -> dict[str, Any]:
    message = event.message
    if message.role == "tool":
        card = tool_card(live, message.tool_call_id)
        if card is None:
            return {"type": "noop"}
        fill_result(card, message.content, message.is_error)
        return {
            "type": "tool_result",
            "call_id": message.tool_call_id,
            "tool": message.tool_name,
            "html": fragment("tool_card", card),
        }
    if message.role not in ("user", "assistant"):
        return {"type": "noop"}
    items = chat_items([message], live.durations, live.diffs, live.tools)
    (item,) = items or [ChatItem("notice")]
    payload: dict[str, Any] = {
        "type": "message",
        "role": message.role,
        "html": fragment("chat_item", item),
    }
    if message.role == "assistant":
        payload["usage"] = usage_totals(live.session.thread.messages)
    return payload


def tool_card(live: LiveSession, call_id: str) -> Any:
    for message in reversed(live.session.thread.messages):
        for call in getattr(message, "tool_calls", ()) or ():
            if call.id == call_id:
                return card_for(call, live.durations, live.diffs, live.tools)
    return None


def _status(live: LiveSession, event: SessionStatus) -> dict[str, Any]:
    label, kind = live.badge
    return {"type": "status", "status": event.status, "badge": label, "badge_kind": kind}


def _tool_running(live: LiveSession, event: ToolExecuting) -> dict[str, Any]:
    return {"type": "tool_running", "call_id": event.call_id, "tool": event.tool_name}


def _tool_progress(live: LiveSession, event: ToolProgress) -> dict[str, Any]:
    return {"type": "tool_progress", "call_id": event.call_id, "message": event.message}


def _tool_done(live: LiveSession, event: ToolComplete) -> dict[str, Any]:
    return {
        "type": "tool_done",
        "call_id": event.call_id,
        "tool": event.tool_name,
        "is_error": event.is_error,
        "duration": live.durations.get(event.call_id),
    }


def _permission(live: LiveSession, event: PermissionRequest) -> dict[str, Any]:
    return {"type": "permission", "call_id": event.call_id, "html": permission_modal(live, event)}


def permission_modal(live: LiveSession, event: PermissionRequest) -> str:
    diff = live.diffs.get(event.call_id)
    if diff is None:
        session = live.session
        diff = disk_diff(session.project_root, event.tool_name, event.arguments, live.tools)
    return fragment("permission_modal", event, diff, always_covers(live, event))


def always_covers(live: LiveSession, event: PermissionRequest) -> str:
    """What "Allow always" would grant, in the REPL's words ("every `git status ...`
    command in this project"); "" when the policy cannot say."""
    from loom.session import grant_words

    try:
        return grant_words(live.session, event.tool_name, event.arguments)
    except Exception:  # a tool with odd arguments: the button still works
        return ""


def _mode(live: LiveSession, event: ModeChanged) -> dict[str, Any]:
    return {"type": "mode", "mode": event.mode}


def _permission_mode(live: LiveSession, event: PermissionModeChanged) -> dict[str, Any]:
    return {"type": "permission_mode", "permission_mode": event.permission_mode}


def _retry(live: LiveSession, event: LlmRetry) -> dict[str, Any]:
    text = (
        f"The model call failed ({event.error}); retry {event.attempt} in "
        f"{event.delay_seconds:.1f} s."
    )
    return _notice("warn", text)


def _error(live: LiveSession, event: SessionError) -> dict[str, Any]:
    return _notice("error", f"{event.origin} error: {event.message}")


def _sync_error(live: LiveSession, event: SyncError) -> dict[str, Any]:
    return _notice("warn", f"Sync: {event.message}")


def _compacted(live: LiveSession, event: ContextCompacted) -> dict[str, Any]:
    if event.fallback:
        return _notice("warn", f"Context: {event.fallback}")
    return _notice(
        "info",
        f"Context: {event.summarised_messages} older message(s) summarised by {event.model} "
        f"(~{event.tokens_before} -> ~{event.tokens_after} tokens); the thread keeps them all",
    )


def _restored(live: LiveSession, event: FilesRestored) -> dict[str, Any]:
    files = ", ".join(event.paths[:10]) + (" …" if len(event.paths) > 10 else "")
    return _notice("info", f"{event.action.capitalize()}: restored {files or 'no files'}")


def _rewound(live: LiveSession, event: ConversationRewound) -> dict[str, Any]:
    return _notice(
        "info", f"Rewound: {event.hidden_messages} message(s) set aside (the thread keeps them)"
    )


def _hook_notice(live: LiveSession, event: Notice) -> dict[str, Any]:
    source = f"{event.source}: " if event.source else ""
    return _notice("warn" if event.level == "warning" else "info", f"{source}{event.text}")


def _subagent(live: LiveSession, event: SubagentStatus) -> dict[str, Any]:
    return {
        "type": "subagent",
        "call_id": event.call_id,
        "status": event.status,
        "child_session_id": event.child_session_id,
        "child_thread_id": event.child_thread_id,
        "agent": event.agent,
        "description": event.description,
        "detail": event.detail,
    }


def _notice(level: str, text: str) -> dict[str, Any]:
    return {"type": "notice", "level": level, "text": text}


def _plan(live: LiveSession, event: ArchitectPlan | ArchitectStep | TodoList) -> dict[str, Any]:
    payload: dict[str, Any] = {"type": "plan", "html": fragment("plan_panel", live.plan)}
    if event.type == "architect_plan":  # the planning answer (JSON) becomes the plan
        item = ChatItem("plan", plan={"summary": event.summary, "steps": event.steps})
        payload["answer_html"] = fragment("chat_item", item)
    return payload


def _shells(live: LiveSession, event: BackgroundCommandChanged) -> dict[str, Any]:
    """The background commands panel, redrawn from the session's list at each change."""
    shells = live.session.background_commands()
    return {"type": "shells", "html": fragment("shells_panel", shells)}


def _turn_done(live: LiveSession, event: TurnComplete) -> dict[str, Any]:
    return {"type": "turn_done", "usage": usage_totals(live.session.thread.messages)}
