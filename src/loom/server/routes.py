"""HTTP routes. Every /api route needs a bearer token; /health and /shared/* are open."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy import text
from starlette.exceptions import HTTPException

from loom.core.ids import is_thread_id
from loom.core.thread import Thread
from loom.server.bodies import lone_surrogate_in
from loom.server.identity import Principal, principal_for_token
from loom.server.schemas import (
    MAX_VERSION,
    THREAD_ID_PATTERN,
    ConflictBody,
    ErrorBody,
    Health,
    Me,
    SearchResults,
    ShareInfo,
    ShareRequest,
    ThreadPage,
    WriteResult,
)
from loom.server.threads import ThreadRepository

bearer = HTTPBearer(auto_error=False, description="an API token from `loom server create-token`")
ThreadId = Annotated[str, Path(pattern=THREAD_ID_PATTERN, description="T-<uuidv7>")]
ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody},
    404: {"model": ErrorBody},
    422: {"model": ErrorBody},
}

open_router = APIRouter()
api = APIRouter(prefix="/api", responses=ERRORS)


async def current_principal(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> Principal:
    if credentials is None or not credentials.credentials:
        raise HTTPException(
            401,
            "missing bearer token; send `Authorization: Bearer <token>`",
            headers={"WWW-Authenticate": "Bearer"},
        )
    async with request.app.state.repo.autocommit.connect() as conn:
        principal = await principal_for_token(conn, credentials.credentials)
    if principal is None:
        raise HTTPException(
            401,
            "token not recognised or revoked; ask for a new one",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return principal


Caller = Annotated[Principal, Depends(current_principal)]


def repo(request: Request) -> ThreadRepository:
    return request.app.state.repo


async def _checked(request: Request, thread: Thread) -> Thread:
    if lone_surrogate_in(await request.body()):
        raise HTTPException(
            422,
            "the thread holds text that is not valid Unicode (a lone surrogate such as "
            "\\ud83d, half an emoji); replace it (U+FFFD) and send the thread again",
        )
    if not is_thread_id(thread.id):
        raise HTTPException(422, f"thread id '{thread.id[:60]}' is not T-<uuidv7>")
    if not 0 <= thread.version <= MAX_VERSION:
        raise HTTPException(422, f"version must be between 0 and {MAX_VERSION}")
    return thread


@open_router.get("/health", response_model=Health)
async def health(request: Request) -> Health:
    async with request.app.state.sessions() as session:
        await session.execute(text("SELECT 1"))
    return Health(status="ok", database=request.app.state.dialect)


@open_router.get("/shared/{share_token}", responses={404: {"model": ErrorBody}})
async def shared_thread(
    request: Request, share_token: Annotated[str, Path(max_length=64)]
) -> dict[str, Any]:
    return await repo(request).get_shared(share_token)


@api.get("/me", response_model=Me)
async def me(caller: Caller) -> Me:
    return Me(user=caller.user_name, org=caller.org_name, is_support=caller.is_support)


@api.post(
    "/threads",
    status_code=201,
    response_model=WriteResult,
    responses={409: {"model": ConflictBody}},
)
async def create_thread(request: Request, caller: Caller, thread: Thread) -> WriteResult:
    written = await repo(request).write(caller, await _checked(request, thread), None)
    return WriteResult(id=written.id, version=written.version, created=written.created)


@api.get("/threads", response_model=ThreadPage)
async def list_threads(
    request: Request,
    caller: Caller,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=400)] = None,
    mine: bool = False,
) -> dict[str, Any]:
    items, next_cursor = await repo(request).list(caller, limit, cursor, mine)
    return {"threads": items, "next_cursor": next_cursor}


@api.get("/threads/search", response_model=SearchResults)
async def search_threads(
    request: Request,
    caller: Caller,
    q: Annotated[str, Query(min_length=1, max_length=500)],
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> dict[str, Any]:
    hits = await repo(request).search(caller, q.replace("\x00", " "), limit)
    return {"query": q, "hits": hits}


@api.put(
    "/threads/{thread_id}",
    response_model=WriteResult,
    responses={201: {"model": WriteResult}, 409: {"model": ConflictBody}},
)
async def put_thread(
    request: Request,
    response: Response,
    caller: Caller,
    thread_id: ThreadId,
    thread: Thread,
    expected_version: Annotated[int | None, Query(ge=0, le=MAX_VERSION)] = None,
) -> WriteResult:
    if thread.id != thread_id:
        raise HTTPException(422, f"the body's id {thread.id[:60]} does not match the URL's")
    written = await repo(request).write(caller, await _checked(request, thread), expected_version)
    if written.created:
        response.status_code = 201
    return WriteResult(id=written.id, version=written.version, created=written.created)


@api.get("/threads/{thread_id}")
async def get_thread(request: Request, caller: Caller, thread_id: ThreadId) -> dict[str, Any]:
    return await repo(request).get(caller, thread_id)


@api.delete("/threads/{thread_id}", status_code=204, response_class=Response)
async def delete_thread(request: Request, caller: Caller, thread_id: ThreadId) -> Response:
    await repo(request).delete(caller, thread_id)
    return Response(status_code=204)


@api.get("/threads/{thread_id}/share", response_model=ShareInfo)
async def get_share(request: Request, caller: Caller, thread_id: ThreadId) -> ShareInfo:
    return _share_info(request, await repo(request).share(caller, thread_id, None, None))


@api.post("/threads/{thread_id}/share", response_model=ShareInfo)
async def set_share(
    request: Request, caller: Caller, thread_id: ThreadId, body: ShareRequest
) -> ShareInfo:
    visibility = str(body.visibility) if body.visibility is not None else None
    info = await repo(request).share(caller, thread_id, visibility, body.is_shared_with_support)
    return _share_info(request, info)


def _share_info(request: Request, info: dict[str, Any]) -> ShareInfo:
    path = info.get("share_path")
    url = str(request.base_url).rstrip("/") + path if path else None
    return ShareInfo(**info, share_url=url)
