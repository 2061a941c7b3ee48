"""`loom server` in tests: real databases (SQLite, PostgreSQL), users and tokens, a real
server process, and the API calls the server tests share."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.net import free_port

PG_ADMIN_DSN = "postgresql://postgres@127.0.0.1:5432/test"


def _postgres_unreachable(exc: BaseException) -> None:
    message = f"PostgreSQL on 127.0.0.1:5432 is unreachable: {exc}"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message + " (CI=true: Postgres tests must run; start it with .ci/run)")
    pytest.skip(message)


@contextlib.contextmanager
def postgres_database() -> Iterator[str]:
    """A fresh, uniquely named database, dropped afterwards; yields its asyncpg URL."""
    import asyncpg

    name = f"loom_test_{uuid.uuid4().hex[:12]}"

    async def admin(sql: str) -> None:
        conn = await asyncpg.connect(PG_ADMIN_DSN, timeout=5)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    try:
        asyncio.run(admin(f'CREATE DATABASE "{name}"'))
    except (OSError, asyncpg.PostgresError) as exc:
        _postgres_unreachable(exc)
    try:
        yield f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"
    finally:
        asyncio.run(admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def migrate(url: str) -> str:
    from loom.server.migrate import upgrade

    upgrade(url)
    return url


def add_user(url: str, name: str, org: str, *, support: bool = False) -> str:
    """Create a user (and org) and return a fresh API token for it."""
    from loom.server.db import make_engine, session_factory
    from loom.server.identity import create_token, create_user

    async def run() -> str:
        engine = make_engine(url)
        try:
            async with session_factory(engine)() as session:
                await create_user(session, name, org, is_support=support)
                _, token = await create_token(session, name)
                await session.commit()
                return token
        finally:
            await engine.dispose()

    return asyncio.run(run())


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


class LiveServer:
    """`loom server` in a subprocess on a loopback port (the real command path)."""

    def __init__(self, database_url: str, home: Path, port: int | None = None) -> None:
        self.database_url = database_url
        self.home = home
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = home / f"server-{self.port}.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 120.0) -> LiveServer:
        # a bound on waiting, not a speed check: on a loaded machine start-up takes 30 s+
        env = {**os.environ, "LOOM_DATABASE_URL": self.database_url, "LOOM_HOME": str(self.home)}
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "loom", "server", "--port", str(self.port)],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.log.read_text()[-2000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    return self
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"server did not come up: {self.log.read_text()[-2000:]}")

    def kill(self) -> None:
        """SIGKILL: no graceful shutdown, as in a crash."""
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


JSON = {"Content-Type": "application/json"}


def body(thread: Any) -> bytes:
    """A thread as the API's request body."""
    return thread.model_dump_json().encode()


def put(backend: Any, headers: dict[str, str], thread: Any, expected: int | None) -> Any:
    """PUT a thread through the backend's test client (with `expected_version` unless None)."""
    return backend.client.put(
        f"/api/threads/{thread.id}",
        params={} if expected is None else {"expected_version": expected},
        content=body(thread),
        headers={**headers, **JSON},
    )
