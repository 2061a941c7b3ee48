"""What the page asks for and does: JSON in, JSON (often carrying an HTML fragment) out.

Every body is validated; a bad one gets 400 with a message saying what to send. Errors a
person must act on (a thread open elsewhere, a bad model name) come back as 409/400 with
the Workspace's own message.
"""

from __future__ import annotations

import asyncio
import base64
import time
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from loom.core.errors import BadInput
from loom.core.images import MAX_IMAGE_BYTES, ImageError, check_count, image_ref
from loom.core.permission_modes import PermissionMode
from loom.session import LoomError, SessionSpec
from loom.web.graph import graph
from loom.web.live import LiveSession, pending_permission
from loom.web.project import (
    MAX_TREE_FILES,
    ProjectPathError,
    changes,
    file_tree,
    preview,
    shell_history,
)
from loom.web.state import PAGE_SIZE, PageNotFound, WebState
from loom.web.views import fragment

MAX_MESSAGE_CHARS = 200_000
MAX_IMAGE_BASE64 = (MAX_IMAGE_BYTES + 2) // 3 * 4 + 4  # a larger upload is refused unread


class ImageUpload(BaseModel):
    name: str = Field(min_length=1, max_length=300)
    data: str = Field(max_length=MAX_IMAGE_BASE64)  # base64


class NewSession(BaseModel):
    text: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS)
    model: str | None = Field(default=None, max_length=200)
    mode: Literal["normal", "architect"] = "normal"
    permission_mode: PermissionMode = "default"
    images: list[ImageUpload] = Field(default_factory=list)  # files dropped on the page


class Message(BaseModel):
    text: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS)
    images: list[ImageUpload] = Field(default_factory=list)  # files dropped on the page


class Answer(BaseModel):
    action: Literal["allow_once", "allow_always", "deny"]
    scope: str | None = Field(default=None, max_length=1000)


class Mode(BaseModel):
    mode: Literal["normal", "architect"]


class PermissionModeBody(BaseModel):
    permission_mode: PermissionMode


class Model(BaseModel):
    model: str = Field(min_length=3, max_length=200)


class Title(BaseModel):
    title: str = Field(min_length=1, max_length=300)


def _state(request: Request) -> WebState:
    return request.app.state.web


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def _body(request: Request, model: type[BaseModel]) -> Any:
    try:
        return model.model_validate_json(await request.body())
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in exc.errors()
        )
        raise BadBody(f"bad request body ({problems}); send JSON like {_example(model)}") from exc


class BadBody(BadInput):
    """A request body that is not the JSON the route takes (answered 400)."""


def _example(model: type[BaseModel]) -> str:
    return {
        NewSession: '{"text": "fix the test", "model": "anthropic:claude-sonnet-4-6"}',
        Message: '{"text": "..."}',
        Answer: '{"action": "allow_once"}',
        Mode: '{"mode": "architect"}',
        PermissionModeBody: '{"permission_mode": "plan"}',
        Model: '{"model": "openai:gpt-5"}',
        Title: '{"title": "..."}',
        TrustAnswer: '{"answer": "trust"}',
    }.get(model, "{}")


async def start(request: Request) -> JSONResponse:
    state = _state(request)
    body = await _body(request, NewSession)
    model = (body.model or "").strip() or None
    try:
        images = _images(body.images)
    except ImageError as exc:
        return _error(400, str(exc))
    try:
        spec = SessionSpec(
            model=model,
            mode=body.mode,
            permission_mode=body.permission_mode,
            asks_mcp_approval=True,
        )
        session = await state.ws.start_session(spec)
    except LoomError as exc:
        return _error(400, str(exc))
    live = state.hub.add(session)
    _sandbox_notice(state, live)
    _mcp_asks(state, live)
    live.send(body.text, images)
    return JSONResponse({"id": session.id, "url": f"/s/{session.id}"})


async def send(request: Request) -> JSONResponse:
    session_id = request.path_params["session_id"]
    live = _state(request).require_live(session_id)
    body = await _body(request, Message)
    try:
        images = _images(body.images)
    except ImageError as exc:
        return _error(400, str(exc))
    live.send(body.text, images)
    return JSONResponse({"ok": True}, status_code=202)


def _images(uploads: list[ImageUpload]) -> list[Any]:
    """Dropped files as checked images (ImageError: not an image, too large, too many)."""
    check_count(len(uploads))
    found = []
    for upload in uploads:
        try:
            data = base64.b64decode(upload.data, validate=True)
        except ValueError:
            raise ImageError(f"{upload.name} arrived damaged; drop it again") from None
        found.append(image_ref(upload.name.rsplit("/", 1)[-1], data))
    return found


async def cancel(request: Request) -> JSONResponse:
    session_id = request.path_params["session_id"]
    live = _state(request).require_live(session_id)
    return JSONResponse({"interrupted": bool(live.session.interrupt())})


async def answer(request: Request) -> JSONResponse:
    session_id = request.path_params["session_id"]
    live = _state(request).require_live(session_id)
    body = await _body(request, Answer)
    if pending_permission(live.session) is None:
        return _error(409, "this session is not waiting for a permission answer any more")
    meta = {"scope": body.scope} if body.scope else {}
    try:
        live.session.respond_to_permission(body.action, meta)
    except (LookupError, ValueError) as exc:
        return _error(409, str(exc))
    live.answered(body.action)
    return JSONResponse({"ok": True})


class Restore(BaseModel):
    force: bool = False  # overwrite files edited by hand since the agent's turn


async def undo_redo(request: Request) -> JSONResponse:
    """Undo (or redo) the files of the agent's last turn. Files edited by hand since
    then come back as `hand_edited` for the page to confirm (and resend with force)."""
    from loom.session import HandEdited, restore_in_session

    session_id = request.path_params["session_id"]
    action = "undo" if request.url.path.endswith("/undo") else "redo"
    live = _state(request).require_live(session_id)
    body = await _body(request, Restore)
    try:
        report = await restore_in_session(live.session, action, force=body.force)
    except HandEdited as exc:
        return JSONResponse({"hand_edited": exc.paths, "action": action})
    except LoomError as exc:
        return _error(409, str(exc))
    return JSONResponse({"paths": report.paths, "action": action})


async def approve_mcp(request: Request) -> JSONResponse:
    """The person trusts a server the project defines (.mcp.json): approved for this
    project and started now in this session (the banner's "Approve and start")."""
    session_id = request.path_params["session_id"]
    state = _state(request)
    live = state.require_live(session_id)
    try:
        ask = state.ws.approve_mcp_server(session_id, request.path_params["name"])
    except LoomError as exc:
        return _error(404, str(exc))
    live.ask_mcp([a for a in live.mcp_asks if a.name != ask.name])
    live.notice("info", f"Approved the MCP server {ask.name!r}; starting {ask.command}")
    return JSONResponse({"name": ask.name, "command": ask.command})


class TrustAnswer(BaseModel):
    answer: Literal["trust", "decline"]


async def answer_trust(request: Request) -> JSONResponse:
    """The banner's answer to the project's trust question: remembered for these
    settings; trusted, sessions started from now on get them."""
    state = _state(request)
    body = await _body(request, TrustAnswer)
    try:
        state.ws.answer_trust(body.answer == "trust")
    except OSError as exc:
        return _error(500, f"cannot record the answer ({exc}); nothing was trusted")
    message = (
        "Trusted: sessions started from now on use the project's settings."
        if body.answer == "trust"
        else "Not trusted: Loom ignores these settings here (`loom trust` to change)."
    )
    for live in state.live_list():  # every tab drops the banner
        live.emit_trust_answered(message)
    return JSONResponse({"answer": body.answer, "message": message})


async def set_mode(request: Request) -> JSONResponse:
    session_id = request.path_params["session_id"]
    live = _state(request).require_live(session_id)
    body = await _body(request, Mode)
    try:
        live.session.set_mode(body.mode)
    except LoomError as exc:  # architect mode with no key for its models: one line
        return _error(400, str(exc))
    return JSONResponse({"mode": body.mode})


async def set_permission_mode(request: Request) -> JSONResponse:
    session_id = request.path_params["session_id"]
    live = _state(request).require_live(session_id)
    body = await _body(request, PermissionModeBody)
    mode = live.session.set_permission_mode(body.permission_mode)
    return JSONResponse({"permission_mode": mode})


async def set_model(request: Request) -> JSONResponse:
    session_id = request.path_params["session_id"]
    state = _state(request)
    live = state.require_live(session_id)
    body = await _body(request, Model)
    try:
        await asyncio.to_thread(state.ws.check_model, body.model.strip())
        live.session.update_model(body.model.strip())
    except (LoomError, ValueError) as exc:
        return _error(400, str(exc))
    live.notice("info", f"Model: {body.model.strip()} from the next call on.")
    return JSONResponse({"model": live.session.model})


async def kill_shell(request: Request) -> JSONResponse:
    """End one background command of a live session (the panel's Kill button)."""
    live = _state(request).require_live(request.path_params["session_id"])
    try:
        said = await live.session.kill_background(request.path_params["command_id"])
    except ValueError as exc:
        return _error(404, str(exc))
    return JSONResponse({"text": said})


async def context_view(request: Request) -> JSONResponse:
    """Where the live session's context window goes (the Context tab, `/context`)."""
    live = _state(request).require_live(request.path_params["session_id"])
    view = await live.session.context_view()
    return JSONResponse({**view.to_dict(), "html": fragment("context_view", view)})


async def stop(request: Request) -> JSONResponse:
    session_id = request.path_params["session_id"]
    state = _state(request)
    state.require_live(session_id)
    await state.ws.stop_session(session_id)
    state.hub.remove(session_id)
    return JSONResponse({"url": f"/s/{session_id}"})


async def session_changes(request: Request) -> JSONResponse:
    params = request.path_params
    live = _state(request).require_live(params.get("session_id") or params["ref"])
    return await _changes_since_start(live.session.project_root, live.session.thread)


async def thread_changes(request: Request) -> JSONResponse:
    ref = request.path_params["ref"]
    state = _state(request)
    if state.live(ref) is not None:
        return await session_changes(request)
    return await _changes_since_start(state.ws.project_root, _load(state, ref))


async def _changes_since_start(root: Any, thread: Any) -> JSONResponse:
    """`git diff` of the working tree against the commit the thread started from."""
    base = thread.git_initial_commit_sha
    files, problem = await asyncio.to_thread(changes, root, thread)
    return JSONResponse({"html": fragment("changes", files, base, problem), "count": len(files)})


async def terminal(request: Request) -> JSONResponse:
    ref = request.path_params["ref"]
    state = _state(request)
    live = state.live(ref)
    messages = live.session.thread.messages if live is not None else _load(state, ref).messages
    return JSONResponse({"html": fragment("terminal", shell_history(list(messages)))})


async def files(request: Request) -> JSONResponse:
    state = _state(request)
    listed = await asyncio.to_thread(state.ws.repo.files)
    html = str(fragment("file_tree", file_tree(listed[:MAX_TREE_FILES])))
    if len(listed) > MAX_TREE_FILES:
        html += f'<p class="muted small">Showing {MAX_TREE_FILES} of {len(listed)} files.</p>'
    return JSONResponse({"html": html, "count": len(listed)})


async def file_preview(request: Request) -> JSONResponse:
    state = _state(request)
    path = request.query_params.get("path", "")
    try:
        html = await asyncio.to_thread(preview, state.ws.project_root, path)
    except (ProjectPathError, OSError) as exc:
        return _error(404, str(exc))
    return JSONResponse(
        {"html": f'<div class="preview-head"><code>{_esc(path)}</code></div>' + str(html)}
    )


async def threads(request: Request) -> JSONResponse:
    state = _state(request)
    q = request.query_params.get("q", "")
    offset_text = request.query_params.get("offset", "0")
    offset = int(offset_text) if offset_text.isdigit() else -1
    if offset < 0 or len(q) > 500:
        return _error(400, "offset must be >= 0 and the query at most 500 characters")
    started = time.perf_counter()
    try:
        every = request.query_params.get("all") == "1"  # the sidebar's "All projects"
        rows, next_offset = await asyncio.to_thread(state.thread_rows, q, offset, PAGE_SIZE, every)
    except LoomError as exc:  # a query with no words in it
        return JSONResponse(
            {"html": f'<p class="muted small">{_esc(str(exc))}</p>', "next": None, "count": 0}
        )
    current = request.query_params.get("current")
    html = fragment("thread_rows", rows, current)
    elapsed_ms = (time.perf_counter() - started) * 1000
    return JSONResponse(  # Server-Timing: what bench/web_bench.py reads
        {"html": html, "next": next_offset, "count": len(rows)},
        headers={"server-timing": f"app;dur={elapsed_ms:.2f}"},
    )


async def resume(request: Request) -> JSONResponse:
    ref = request.path_params["ref"]
    state = _state(request)
    if state.live(ref) is not None:
        return JSONResponse({"url": f"/s/{ref}"})
    try:
        session = await state.ws.resume(ref, asks_mcp_approval=True)
    except LoomError as exc:
        return _error(409, str(exc))
    live = state.hub.add(session)
    _sandbox_notice(state, live)
    _mcp_asks(state, live)
    return JSONResponse({"id": session.id, "url": f"/s/{session.id}"})


async def rename(request: Request) -> JSONResponse:
    ref = request.path_params["ref"]
    state = _state(request)
    body = await _body(request, Title)
    title = " ".join(body.title.split())
    live = state.live(ref)
    if live is not None:  # the session holds the writer lock: rename through it
        live.session.set_title(title)
        state.hub.badges_changed()
    else:
        try:
            await asyncio.to_thread(state.ws.threads.rename, ref, title)
        except LoomError as exc:
            return _error(409, str(exc))
    return JSONResponse({"title": title})


async def delete(request: Request) -> JSONResponse:
    ref = request.path_params["ref"]
    state = _state(request)
    if state.live(ref) is not None:
        return _error(409, "close this live session first, then delete the thread")
    thread_id = _resolve(state, ref)
    try:
        await asyncio.to_thread(state.ws.threads.delete, thread_id)
    except LoomError as exc:
        return _error(409, str(exc))
    return JSONResponse({"id": thread_id})


async def restore(request: Request) -> JSONResponse:
    ref = request.path_params["ref"]
    state = _state(request)
    try:
        thread_id = await asyncio.to_thread(state.ws.threads.restore, ref)
    except LoomError as exc:
        return _error(409, str(exc))
    return JSONResponse({"id": thread_id, "url": f"/s/{thread_id}"})


def _sandbox_notice(state: WebState, live: LiveSession) -> None:
    """Say at session start when agent commands will run unconfined, and which of the
    project's settings it ignores (as the REPL's header does)."""
    line = state.ws.sandbox_notice()
    if line:
        live.notice("warn", line)
    trust = state.ws.trust  # answered "Don't trust": no banner, so the session names them
    ignored = (
        trust.notice("`loom trust` to change it") if trust and not trust.needs_question else None
    )
    if ignored:
        live.notice("warn", ignored)
    loaded = live.session.instructions_header()  # which AGENTS.md / CLAUDE.md / LOOM.md
    if loaded:
        live.notice("info", loaded[0].upper() + loaded[1:])


def _mcp_asks(state: WebState, live: LiveSession) -> None:
    """The project's MCP servers this session did not start (never approved): a banner
    with an Approve button for each, as the REPL asks and an editor asks over ACP."""
    asks = state.ws.mcp_awaiting_approval(live.id)
    if asks:
        live.ask_mcp(asks)


def _resolve(state: WebState, ref: str) -> str:
    try:
        return state.ws.threads.resolve(ref)
    except LoomError as exc:
        raise PageNotFound(str(exc)) from exc


def _load(state: WebState, ref: str) -> Any:
    try:
        return state.ws.threads.load(ref)
    except LoomError as exc:
        raise PageNotFound(str(exc)) from exc


def _esc(text: str) -> str:
    from html import escape

    return escape(text)


routes = [
    Route("/api/sessions", start, methods=["POST"]),
    Route("/api/sessions/{session_id}/messages", send, methods=["POST"]),
    Route("/api/sessions/{session_id}/cancel", cancel, methods=["POST"]),
    Route("/api/sessions/{session_id}/permission", answer, methods=["POST"]),
    Route("/api/sessions/{session_id}/mode", set_mode, methods=["POST"]),
    Route("/api/sessions/{session_id}/permission_mode", set_permission_mode, methods=["POST"]),
    Route("/api/sessions/{session_id}/undo", undo_redo, methods=["POST"]),
    Route("/api/sessions/{session_id}/redo", undo_redo, methods=["POST"]),
    Route("/api/sessions/{session_id}/model", set_model, methods=["POST"]),
    Route("/api/sessions/{session_id}/mcp/{name}/approve", approve_mcp, methods=["POST"]),
    Route("/api/trust", answer_trust, methods=["POST"]),
    Route("/api/sessions/{session_id}/stop", stop, methods=["POST"]),
    Route("/api/sessions/{session_id}/shells/{command_id}/kill", kill_shell, methods=["POST"]),
    Route("/api/sessions/{session_id}/context", context_view, methods=["GET"]),
    Route("/api/sessions/{session_id}/changes", session_changes, methods=["GET"]),
    Route("/api/threads/{ref}/changes", thread_changes, methods=["GET"]),
    Route("/api/threads/{ref}/terminal", terminal, methods=["GET"]),
    Route("/api/files", files, methods=["GET"]),
    Route("/api/graph", graph, methods=["GET"]),
    Route("/api/files/preview", file_preview, methods=["GET"]),
    Route("/api/threads", threads, methods=["GET"]),
    Route("/api/threads/{ref}/resume", resume, methods=["POST"]),
    Route("/api/threads/{ref}/rename", rename, methods=["POST"]),
    Route("/api/threads/{ref}/delete", delete, methods=["POST"]),
    Route("/api/threads/{ref}/restore", restore, methods=["POST"]),
]
