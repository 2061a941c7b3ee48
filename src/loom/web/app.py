"""The ASGI application of `loom web`: routes, static files, the security guard.

Plain Starlette (FastAPI's OpenAPI models cost ~0.3 s of start-up and we have no API
schema to publish); the guard wraps everything, static files and the stream included.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from loom import __version__
from loom.web import api, pages, stream
from loom.web.api import BadBody
from loom.web.security import Guard, GuardMiddleware
from loom.web.state import PageNotFound, WebState

if TYPE_CHECKING:
    from loom.session import Workspace

STATIC = Path(__file__).parent / "static"


def create_app(ws: Workspace, guard: Guard) -> GuardMiddleware:
    """The ASGI app for one Workspace."""
    state = WebState(ws=ws, guard=guard, version=_asset_version())

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        yield
        for session_id in list(state.hub.sessions):
            state.hub.remove(session_id)
        await ws.shutdown()

    async def not_found(request: Request, exc: Exception) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": str(exc)}, status_code=404)
        return PlainTextResponse(str(exc), status_code=404)

    async def bad_body(_: Request, exc: Exception) -> Response:
        return JSONResponse({"error": str(exc)}, status_code=400)

    app = Starlette(
        routes=[
            *pages.routes,
            *api.routes,
            *stream.routes,
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ],
        exception_handlers={PageNotFound: not_found, BadBody: bad_body},
        lifespan=lifespan,
    )
    app.state.web = state
    return GuardMiddleware(app, guard)


def _asset_version() -> str:
    """Changes when a static file changes, so browsers never run a stale script."""
    stamps = [int(p.stat().st_mtime) for p in STATIC.iterdir() if p.is_file()]
    return f"{__version__}-{max(stamps, default=0):x}"
