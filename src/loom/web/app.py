"""The FastAPI application of `loom web`: routes, static files, the security guard."""

from __future__ import annotations

from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from loom import __version__
from loom.web import api, pages, stream
from loom.web.api import BadBody
from loom.web.security import Guard, GuardMiddleware
from loom.web.state import NotFound, WebState

STATIC = Path(__file__).parent / "static"


def create_app(ws: Any, guard: Guard) -> Any:
    """The ASGI app for one Workspace. The guard wraps everything, static files too."""

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> Any:
        yield
        for session_id in list(state.hub.sessions):
            state.hub.remove(session_id)
        await ws.shutdown()

    app = FastAPI(lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    state = WebState(ws=ws, guard=guard, version=_asset_version())
    app.state.web = state
    app.include_router(pages.router)
    app.include_router(api.router)
    app.include_router(stream.router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.exception_handler(NotFound)
    async def not_found(request: Request, exc: NotFound) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": str(exc)}, status_code=404)
        return HTMLResponse(str(exc), status_code=404)

    @app.exception_handler(BadBody)
    async def bad_body(_: Request, exc: BadBody) -> Response:
        return JSONResponse({"error": str(exc)}, status_code=400)

    return GuardMiddleware(app, guard)


def _asset_version() -> str:
    """Changes when a static file changes, so browsers never run a stale script."""
    stamps = [int(p.stat().st_mtime) for p in STATIC.iterdir() if p.is_file()]
    return f"{__version__}-{max(stamps, default=0):x}"
