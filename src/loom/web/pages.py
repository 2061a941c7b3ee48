"""The pages: a new session, a live session or a saved thread (one template), and cost."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, Response

from loom.web._compat import LoomError
from loom.web.cards import ChatItem, chat_items, usage_totals
from loom.web.live import LiveSession, _pending
from loom.web.payloads import permission_modal
from loom.web.render import code_css
from loom.web.state import WebState
from loom.web.views import page

router = APIRouter()


def _state(request: Request) -> WebState:
    return request.app.state.web


def _common(state: WebState, view: str, session_id: str | None) -> dict[str, Any]:
    rows, next_offset = state.thread_rows()
    root = state.ws.project_root
    return {
        "view": view,
        "session_id": session_id,
        "project_root": str(root),
        "project_name": root.name or str(root),
        "live": state.live_list(),
        "threads": rows,
        "next_offset": next_offset,
        "version": state.version,
        "models": _models(state),
    }


def _models(state: WebState) -> list[str]:
    known = getattr(state.ws, "known_models", None)
    return known() if callable(known) else []


@router.get("/", response_class=HTMLResponse)
def new_session(request: Request) -> str:
    state = _state(request)
    context = _common(state, "new", None)
    context.update(items=[], model=state.ws.config.model.default, mode="normal",
                   title="", thread_id=None, busy=False, plan=None, partial="")
    return page("session.html", **context)


@router.get("/s/{ref}", response_class=HTMLResponse)
def session_page(request: Request, ref: str) -> Response:
    state = _state(request)
    live = state.live(ref)
    if live is not None:
        return HTMLResponse(page("session.html", **_live_context(state, live)))
    try:
        thread = state.ws.threads.load(ref)
    except LoomError as exc:
        context = _common(state, "new", None)
        context.update(items=[], model=state.ws.config.model.default, mode="normal",
                       title="Not found", thread_id=None, busy=False, plan=None, partial="",
                       notice={"level": "error", "text": str(exc)})
        return HTMLResponse(page("session.html", **context), status_code=404)
    live = state.live(thread.id)  # a prefix may name a live session
    if live is not None:
        return HTMLResponse(page("session.html", **_live_context(state, live)))
    context = _common(state, "read", thread.id)
    context.update(
        items=chat_items(thread.messages), model=f"{thread.provider}:{thread.model}",
        mode="normal", title=thread.metadata.title, thread_id=thread.id, busy=False,
        plan=None, partial="", totals=usage_totals(thread.messages),
    )
    return HTMLResponse(page("session.html", **context))


def _live_context(state: WebState, live: LiveSession) -> dict[str, Any]:
    """Everything the stream has shown so far, and the number of its last event: the
    page's EventSource asks for what comes after it."""
    session = live.session
    seq = live.last_seq  # taken with the render, no await in between
    context = _common(state, "live", live.id)
    items = chat_items(session.thread.messages, live.durations)
    _mark_running(items, live)
    notices = [ChatItem("notice", text=n["text"], level=n["level"]) for n in live.notices]
    permission = None
    if live.permission is not None and _pending(session) is not None:
        permission = permission_modal(live, live.permission)
    context.update(
        items=items + notices,
        model=session.model,
        mode=session.get_mode(),
        title=session.thread.metadata.title,
        thread_id=session.thread.id,
        seq=seq,
        badge=live.badge,
        busy=live.status != "idle" or bool(live.tasks),
        plan=live.plan,
        partial=live.partial,
        permission=permission,
        totals=usage_totals(session.thread.messages),
    )
    return context


def _mark_running(items: list[ChatItem], live: LiveSession) -> None:
    for item in items:
        for card in item.tools:
            if card.call_id in live.running and card.status == "pending":
                card.status = "running"


@router.get("/cost", response_class=HTMLResponse)
def cost_page(request: Request) -> str:
    state = _state(request)
    summaries = state.ws.threads.list(limit=100_000)
    report = state.costs.report(summaries, state.ws.threads.load)
    context = _common(state, "cost", None)
    context["report"] = report
    return page("cost.html", **context)


@router.get("/code.css")
def code_stylesheet() -> Response:
    return PlainTextResponse(code_css(), media_type="text/css",
                             headers={"cache-control": "max-age=86400"})

