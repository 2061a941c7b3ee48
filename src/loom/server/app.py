"""The FastAPI application: routes, error mapping, body limit, and the migration check."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DataError, DBAPIError, OperationalError

from loom import __version__
from loom.server.db import make_engine, session_factory
from loom.server.limits import BodySizeLimit
from loom.server.migrate import check_migrated
from loom.server.routes import api, open_router
from loom.server.rows import BadThread
from loom.server.settings import ServerSettings
from loom.server.threads import BadCursor, Conflict, Forbidden, RecordNotFound, ThreadRepository


def create_app(settings: ServerSettings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        engine = make_engine(settings.database_url)
        try:
            await check_migrated(engine, settings.database_url)
            app.state.engine = engine
            app.state.dialect = engine.dialect.name
            app.state.sessions = session_factory(engine)
            app.state.repo = ThreadRepository(engine, app.state.sessions)
            yield
        finally:
            await engine.dispose()

    app = FastAPI(
        title="Loom sync server",
        version=__version__,
        description="Threads synced from Loom clients: optimistic locking, sharing, search.",
        lifespan=lifespan,
    )
    app.include_router(open_router)
    app.include_router(api)
    _install_error_handlers(app)
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_body_bytes)
    return app


def app_from_env() -> FastAPI:
    """Factory for uvicorn worker processes (`loom server --workers N`): settings from env."""
    return create_app(ServerSettings.from_env())


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        # FastAPI's own handler echoes the input back and fails (500) to render what
        # JSON cannot hold: `1e400` parsed as inf, a lone surrogate. Say what is wrong
        # without the input.
        return JSONResponse({"detail": [_safe_error(e) for e in exc.errors()]}, 422)

    @app.exception_handler(RecordNotFound)
    async def _not_found(_: Request, exc: RecordNotFound) -> JSONResponse:
        return JSONResponse({"detail": f"no thread {exc.args[0]} (or not visible to you)"}, 404)

    @app.exception_handler(Forbidden)
    async def _forbidden(_: Request, exc: Forbidden) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, 403)

    @app.exception_handler(Conflict)
    async def _conflict(_: Request, exc: Conflict) -> JSONResponse:
        body = {
            "detail": str(exc),
            "server_version": exc.server_version,
            "server_thread": exc.server_thread,
        }
        return JSONResponse(body, 409)

    @app.exception_handler(BadThread)
    async def _bad_thread(_: Request, exc: BadThread) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, 422)

    @app.exception_handler(BadCursor)
    async def _bad_cursor(_: Request, exc: BadCursor) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, 400)

    @app.exception_handler(OperationalError)
    async def _db_unavailable(_: Request, exc: OperationalError) -> JSONResponse:
        return JSONResponse(
            {"detail": "the database is busy or unreachable; retry shortly"},
            503,
            headers={"Retry-After": "1"},
        )

    @app.exception_handler(DBAPIError)
    async def _db_error(_: Request, exc: DBAPIError) -> JSONResponse:
        if isinstance(exc, DataError):
            # Data the database refused (e.g. a value out of range): the request's fault.
            return JSONResponse({"detail": f"the database rejected this request: {exc.orig}"}, 422)
        if exc.connection_invalidated:
            return JSONResponse(
                {"detail": "lost the database connection; retry shortly"},
                503,
                headers={"Retry-After": "1"},
            )
        raise exc


def _safe_error(error: dict) -> dict:
    from loom.core.text import clean_text

    loc = [part if isinstance(part, int) else clean_text(str(part)) for part in error["loc"]]
    return {"loc": loc, "msg": clean_text(str(error.get("msg", ""))), "type": error.get("type")}
