"""`loom server`: run the team sync server and manage its users and tokens."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import typer

from loom.cli._output import emit, fail

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from loom.server.settings import ServerSettings

server_app = typer.Typer(
    help="Run the team sync server (`loom server`), migrate its database, manage users/tokens.",
    invoke_without_command=True,
    no_args_is_help=False,
)

JsonOpt = typer.Option(False, "--json", help="Print machine-readable JSON.")


def register(app: typer.Typer) -> None:
    app.add_typer(server_app, name="server")


def _settings() -> ServerSettings:
    from loom.paths import LoomPaths
    from loom.server.settings import ServerSettings

    default = f"sqlite+aiosqlite:///{LoomPaths.from_env().data / 'server.db'}"
    try:
        return ServerSettings.from_env(default)
    except ValueError as exc:
        fail(str(exc))


def _database_problem(url: str, exc: Exception) -> str:
    from loom.server.settings import redact_url

    detail = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0][:300]
    return (
        f"cannot use the database {redact_url(url)}: {detail}. Check LOOM_DATABASE_URL "
        "and that the database server is running and the database exists."
    )


def _run_admin(
    work: Callable[[AsyncSession], Awaitable[dict[str, Any]]], as_json: bool
) -> dict[str, Any]:
    """Run `work(session)` in one transaction on a migrated database."""
    from loom.server.db import make_engine, session_factory
    from loom.server.identity import IdentityError
    from loom.server.migrate import DatabaseNotMigrated, check_migrated

    settings = _settings()

    async def run() -> dict[str, Any]:
        engine = make_engine(settings.database_url)
        try:
            await check_migrated(engine, settings.database_url)
            async with session_factory(engine)() as session:
                result = await work(session)
                await session.commit()
                return result
        finally:
            await engine.dispose()

    try:
        return asyncio.run(run())
    except (IdentityError, DatabaseNotMigrated) as exc:
        fail(str(exc), as_json)
    except Exception as exc:  # connection refused, missing database, bad credentials...
        fail(_database_problem(settings.database_url, exc), as_json)
    raise AssertionError("unreachable")


@server_app.callback()
def serve(
    ctx: typer.Context,
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on."),
    port: int = typer.Option(8080, "--port", min=0, max=65535, help="Port to listen on."),
    workers: int = typer.Option(
        1, "--workers", min=1, max=64, help="Server processes sharing the port (stateless)."
    ),
) -> None:
    """Start the sync server (refuses an unmigrated database)."""
    if ctx.invoked_subcommand is not None:
        return
    import uvicorn

    from loom.server import create_app
    from loom.server.migrate import DatabaseNotMigrated, check_migrated_sync
    from loom.server.settings import DATABASE_URL_ENV, MAX_BODY_ENV, redact_url

    settings = _settings()
    try:
        check_migrated_sync(settings.database_url)
    except DatabaseNotMigrated as exc:
        fail(str(exc))
    except Exception as exc:
        fail(_database_problem(settings.database_url, exc))
    typer.echo(
        f"Loom server on http://{host}:{port} with {workers} process(es) "
        f"(database {redact_url(settings.database_url)})",
        err=True,
    )
    if workers == 1:
        uvicorn.run(
            create_app(settings),
            host=host,
            port=port,
            log_level="warning",
            timeout_graceful_shutdown=5,
        )
        return
    # Worker processes build their own app from the environment.
    os.environ[DATABASE_URL_ENV] = settings.database_url
    os.environ[MAX_BODY_ENV] = str(settings.max_body_bytes)
    uvicorn.run(
        "loom.server.app:app_from_env",
        factory=True,
        workers=workers,
        host=host,
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=5,
    )


@server_app.command("migrate")
def migrate(as_json: bool = JsonOpt) -> None:
    """Create or upgrade the server's database schema (Alembic)."""
    from loom.server.migrate import head_revision, upgrade
    from loom.server.settings import redact_url

    settings = _settings()
    try:
        upgrade(settings.database_url)
    except Exception as exc:
        fail(_database_problem(settings.database_url, exc), as_json)
    head = head_revision(settings.database_url)
    url = redact_url(settings.database_url)
    emit({"database": url, "revision": head}, f"database {url} is at revision {head}", as_json)


@server_app.command("create-user")
def create_user(
    name: str = typer.Argument(..., help="User name (unique)."),
    org: str = typer.Option(..., "--org", help="Organization; created if new."),
    support: bool = typer.Option(False, "--support", help="May read threads shared with support."),
    as_json: bool = JsonOpt,
) -> None:
    """Add a user to an organization."""
    from loom.server.identity import create_user as create

    async def work(session: AsyncSession) -> dict[str, Any]:
        user = await create(session, name, org, is_support=support)
        return {"id": user.id, "name": user.name, "org": org.strip(), "is_support": support}

    data = _run_admin(work, as_json)
    emit(data, f"created user {data['name']} in organization {data['org']}", as_json)


@server_app.command("create-token")
def create_token(
    name: str = typer.Argument(..., help="The user the token belongs to."),
    as_json: bool = JsonOpt,
) -> None:
    """Make an API token for a user (shown once; only its hash is stored)."""
    from loom.server.identity import create_token as create

    async def work(session: AsyncSession) -> dict[str, Any]:
        row, token = await create(session, name)
        return {"id": row.id, "user": name, "token": token}

    data = _run_admin(work, as_json)
    emit(
        data,
        f"token {data['id']} for {name} (copy it now, it is not shown again):\n{data['token']}\n"
        f"use it with: loom login --server URL --token {data['token']}",
        as_json,
    )


@server_app.command("revoke-token")
def revoke_token(
    token: str = typer.Argument(..., help="The token id (from create-token) or the token."),
    as_json: bool = JsonOpt,
) -> None:
    """Revoke an API token; requests with it get 401 from then on."""
    from loom.server.identity import revoke_token as revoke

    async def work(session: AsyncSession) -> dict[str, Any]:
        row = await revoke(session, token)
        return {"id": row.id, "revoked_at": row.revoked_at}

    data = _run_admin(work, as_json)
    emit(data, f"token {data['id']} revoked", as_json)
