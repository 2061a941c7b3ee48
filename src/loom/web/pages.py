"""The pages: a new session, a live session or a saved thread (one template), and cost.

Handlers run on the event loop: a live session's render and the sequence number it
includes are taken together, with no await in between (see live.py).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from loom.config import default_model
from loom.core.permission_modes import PERMISSION_MODES
from loom.session import LoomError, texts_before_edits
from loom.web.cards import DISK_DIFF_BYTES, ChatItem, chat_items, saved_diffs, usage_totals
from loom.web.live import LiveSession, pending_permission
from loom.web.payloads import permission_modal
from loom.web.render import code_css
from loom.web.state import WebState
from loom.web.views import page


def _state(request: Request) -> WebState:
    return request.app.state.web


async def _common(state: WebState, view: str, session_id: str | None) -> dict[str, Any]:
    rows, next_offset = await asyncio.to_thread(state.thread_rows)
    root = state.ws.project_root
    return {
        "view": view,
        "session_id": session_id,
        "project_root": str(root),
        "project_name": root.name or str(root),
        "threads": rows,
        "next_offset": next_offset,
        "version": state.version,
        "models": state.models(),
        "trust_lines": trust_question(state.ws),
    }


def trust_question(ws: Any) -> list[list[str]] | None:
    """The project's trust question for the banner, one group of lines per setting (a
    bullet each), while it waits for an answer (its settings spelled out, secrets
    masked, what changed since)."""
    trust = ws.trust
    return trust.question_groups() if trust is not None and trust.needs_question else None


def _new_context(state: WebState, context: dict[str, Any], **extra: Any) -> dict[str, Any]:
    context.update(
        items=[],
        model=default_model(state.ws.config),
        mode="normal",
        permission_mode="default",
        permission_modes=PERMISSION_MODES,
        title="",
        thread_id=None,
        busy=False,
        plan=None,
        partial="",
        live=state.live_list(),
    )
    context.update(extra)
    return context


async def new_session(request: Request) -> Response:
    state = _state(request)
    context = _new_context(state, await _common(state, "new", None))
    return HTMLResponse(page("session.html", **context))


async def _not_found_page(state: WebState, exc: LoomError) -> Response:
    context = _new_context(
        state, await _common(state, "new", None), title="Not found",
        notice={"level": "error", "text": str(exc)},
    )  # fmt: skip
    return HTMLResponse(page("session.html", **context), status_code=404)


async def session_page(request: Request) -> Response:
    state = _state(request)
    ref = request.path_params["ref"]
    thread = None
    if state.live(ref) is None:
        try:
            thread = await asyncio.to_thread(state.ws.threads.load, ref)
        except LoomError as exc:
            return await _not_found_page(state, exc)
        ref = thread.id
    context = await _common(state, "read", ref)
    live = state.live(ref)  # looked up again: it may have started while we read
    if live is not None:
        return HTMLResponse(page("session.html", **_live_context(state, live, context)))
    if thread is None:  # it was live a moment ago and has stopped since: read its file
        try:
            thread = await asyncio.to_thread(state.ws.threads.load, ref)
        except LoomError as exc:
            return await _not_found_page(state, exc)
    befores = await asyncio.to_thread(
        texts_before_edits, thread.workspace_root, thread, DISK_DIFF_BYTES
    )
    context.update(
        items=chat_items(thread.messages, diffs=saved_diffs(thread.messages, befores)),
        model=f"{thread.provider}:{thread.model}",
        mode="normal",
        permission_mode="default",
        permission_modes=PERMISSION_MODES,
        title=thread.metadata.title,
        thread_id=thread.id,
        busy=False,
        plan=None,
        partial="",
        totals=usage_totals(thread.messages),
        live=state.live_list(),
        family=family_of(thread),
        elsewhere=elsewhere(state, thread),
    )
    return HTMLResponse(page("session.html", **context))


def elsewhere(state: WebState, thread: Any) -> dict[str, str] | None:
    """Another project's thread (read here, resumed only there, under its own settings
    and trust): its project's name and folder, for the page to say so."""
    if state.ws.runs_here(thread.workspace_root):
        return None
    root = str(thread.workspace_root)
    return {"root": root, "name": Path(root).name or root}


def family_of(thread: Any) -> dict[str, str] | None:
    """A sub-agent's thread: its agent and the thread that started it (linked)."""
    if not thread.parent_thread_id:
        return None
    return {"parent": thread.parent_thread_id, "agent": thread.agent or "general"}


def _live_context(state: WebState, live: LiveSession, context: dict[str, Any]) -> dict[str, Any]:
    """Everything the stream has shown so far, and the number of its last event: the
    page's EventSource asks for what comes after it. Synchronous on purpose."""
    session = live.session
    notices = [
        (int(n.get("at", len(session.thread.messages))),
         ChatItem("notice", text=n["text"], level=n["level"]))
        for n in live.notices
    ]  # fmt: skip
    items = chat_items(
        session.thread.messages, live.durations, live.diffs, live.tools, notices=notices
    )
    _mark_running(items, live)
    permission = None
    if live.permission is not None and pending_permission(session) is not None:
        permission = permission_modal(live, live.permission)
    context.update(
        view="live",
        session_id=live.id,
        live=state.live_list(),
        items=items,
        model=session.model,
        mode=session.get_mode(),
        permission_mode=session.permission_mode,
        permission_modes=PERMISSION_MODES,
        title=session.thread.metadata.title,
        thread_id=session.thread.id,
        seq=live.last_seq,
        badge=live.badge,
        busy=live.status != "idle" or bool(live.tasks),
        plan=live.plan,
        shells=session.background_commands(),
        partial=live.partial,
        thinking=live.thinking,
        permission=permission,
        mcp_asks=live.mcp_asks,
        totals=usage_totals(session.thread.messages),
        family=family_of(session.thread),
    )
    return context


def _mark_running(items: list[ChatItem], live: LiveSession) -> None:
    for item in items:
        for card in item.tools:
            if card.call_id in live.running and card.status == "pending":
                card.status = "running"


async def cost_page(request: Request) -> Response:
    state = _state(request)

    def build() -> Any:
        summaries = state.ws.threads.list(limit=1_000_000)
        return state.costs.report(summaries, state.ws.threads.load)

    report = await asyncio.to_thread(build)
    context = await _common(state, "cost", None)
    context.update(report=report, live=state.live_list())
    return HTMLResponse(page("cost.html", **context))


async def code_stylesheet(request: Request) -> Response:
    return Response(code_css(), media_type="text/css", headers={"cache-control": "max-age=86400"})


routes = [
    Route("/", new_session),
    Route("/s/{ref}", session_page),
    Route("/cost", cost_page),
    Route("/code.css", code_stylesheet),
]
