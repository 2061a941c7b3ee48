"""One live connection to one MCP server, owned by a background task.

The SDK's client is an async context manager, which must be entered and left in the same
task; so each connection has an owner task that enters it, publishes the client, and
waits until it is told to stop or the transport ends (the server process exited, the
HTTP stream broke). A dead connection is started again on its next use.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from loom.mcp_client.specs import ServerSpec

log = logging.getLogger(__name__)

STOP_TIMEOUT = 5.0  # seconds for a server to exit before its task is cancelled
STDERR_TAIL = 600  # characters of a failed server's stderr shown in its error


class McpConnectError(Exception):
    """A server could not be started or reached; the message is one line for a person."""


class ServerConnection:
    def __init__(
        self,
        spec: ServerSpec,
        *,
        startup_timeout: float,
        log_dir: Path,
        pass_env: Sequence[str] = (),
        cwd: Path | None = None,
    ) -> None:
        self.spec = spec
        self.cwd = spec.cwd or cwd  # its entry's own `cwd` wins (see McpHub._working_folder)
        self.pass_env = tuple(pass_env)
        self.startup_timeout = startup_timeout
        self.log_path = log_dir / f"{spec.name}.log"
        self.tools: list[Any] = []  # mcp_types.Tool, as listed at the last connect
        self.state = "idle"  # idle, connecting, ready, exited, failed, stopped
        self.error: str | None = None
        self.restarts = 0
        self._client: Any = None
        self._owner: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._lock = asyncio.Lock()

    # -- lifecycle ---------------------------------------------------------------------

    async def ensure(self) -> Any:
        """The connected client, (re)starting the server when it is not running.
        Raises McpConnectError with a one-line reason."""
        async with self._lock:
            if self.state == "ready" and self._client is not None:
                return self._client
            if self.state == "stopped":
                raise McpConnectError(f"MCP server {self.spec.name!r} was stopped with its session")
            if self.state in ("exited", "failed"):
                self.restarts += 1
            await self._start()
            return self._client

    async def _start(self) -> None:
        await self._shutdown_owner()
        self.state, self.error = "connecting", None
        self._stop = asyncio.Event()
        ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._owner = asyncio.create_task(self._own(ready), name=f"mcp-{self.spec.name}")
        try:
            async with asyncio.timeout(self.startup_timeout):
                self._client, self.tools = await asyncio.shield(ready)
        except TimeoutError:
            await self._shutdown_owner(wait=False)  # stuck in the handshake: no stop to hear
            self._fail(
                f"did not answer within {self.startup_timeout:g} s of starting "
                f"({self._stderr_hint()}raise [mcp] startup_timeout if it is just slow)"
            )
        except McpConnectError:
            await self._shutdown_owner()
            raise
        self.state = "ready"

    def _fail(self, why: str) -> None:
        self.state, self.error = "failed", why
        raise McpConnectError(f"MCP server {self.spec.name!r}: {why}")

    async def _own(self, ready: asyncio.Future[Any]) -> None:
        from mcp import Client
        from mcp_types import Implementation

        closed = asyncio.Event()
        try:
            async with Client(
                self._transport(closed.set),
                # the initialize handshake every server speaks; "auto" would first probe
                # the 2026 `server/discover`, a round trip most servers answer with an error
                mode="legacy",
                client_info=Implementation(name="loom", version=_loom_version()),
            ) as client:
                tools = await _list_all_tools(client)
                if not ready.done():
                    ready.set_result((client, tools))
                stop = asyncio.ensure_future(self._stop.wait())
                gone = asyncio.ensure_future(closed.wait())
                try:
                    await asyncio.wait({stop, gone}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    stop.cancel()
                    gone.cancel()
                if closed.is_set() and not self._stop.is_set():
                    self._mark_exited()
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
            raise
        except BaseException as exc:  # reported through `ready` or the state
            reason = self._reason(exc)
            if not ready.done():
                ready.set_exception(McpConnectError(f"MCP server {self.spec.name!r}: {reason}"))
                self.state, self.error = "failed", reason
            elif self.state == "ready":
                self._mark_exited(reason)
        finally:
            self._client = None

    def _mark_exited(self, reason: str | None = None) -> None:
        self.state = "exited"
        self.error = reason or "the server closed the connection; it restarts on next use"
        log.info("MCP server %s: %s", self.spec.name, self.error)

    @asynccontextmanager
    async def _transport(self, on_close: Any) -> AsyncIterator[Any]:
        """The SDK transport for this spec, with its incoming stream watched so the owner
        hears when the server goes away."""
        import anyio

        if self.spec.url:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            http = httpx2.AsyncClient(
                headers=self.spec.headers, timeout=httpx2.Timeout(30.0, read=300.0)
            )
            inner = streamable_http_client(self.spec.url, http_client=http)
        else:
            from mcp.client.stdio import StdioServerParameters, stdio_client

            params = StdioServerParameters(
                command=self.spec.command or "",
                args=list(self.spec.args),
                env=server_environment(self.spec.env, self.pass_env),
                cwd=self.cwd,
                encoding_error_handler="replace",
            )
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            errlog = self.log_path.open("w", encoding="utf-8")  # the server's stderr
            inner = _closing(stdio_client(params, errlog=errlog), errlog)
        async with inner as (read_stream, write_stream):
            send, receive = anyio.create_memory_object_stream[Any](0)

            async def pump() -> None:
                async with send:
                    async for item in read_stream:
                        await send.send(item)
                on_close()

            async with anyio.create_task_group() as group:
                group.start_soon(pump)
                try:
                    yield receive, write_stream
                finally:
                    group.cancel_scope.cancel()

    async def reset(self, why: str) -> None:
        """Drop a connection that broke under a call; the next use starts it again."""
        async with self._lock:
            await self._shutdown_owner()
            self._mark_exited(why)

    async def aclose(self) -> None:
        """Stop the server (stdio: stdin closed, then the process tree is killed)."""
        self.state = "stopped"
        await self._shutdown_owner()

    async def _shutdown_owner(self, *, wait: bool = True) -> None:
        owner, self._owner = self._owner, None
        if owner is None or owner.done():
            return
        self._stop.set()
        try:
            async with asyncio.timeout(STOP_TIMEOUT if wait else 0):
                await asyncio.shield(owner)
        except TimeoutError:
            owner.cancel()
            with contextlib.suppress(BaseException):
                await owner
        except BaseException:  # the owner already reported what went wrong
            pass

    # -- messages ----------------------------------------------------------------------

    def _reason(self, exc: BaseException) -> str:
        exc = _innermost(exc)
        if isinstance(exc, FileNotFoundError | PermissionError) and not self.spec.url:
            return (
                f"cannot run {self.spec.command!r} ({exc.strerror or exc}); install it or fix "
                f"`command` in {self.spec.source or 'the config'}"
            )
        text = str(exc) or type(exc).__name__
        if self.spec.url:
            return (
                f"cannot reach {self.spec.url} ({text}); check the url, that the server runs, "
                "and its headers (a token it expects)"
            )
        return f"{text}; {self._stderr_hint()}see {self.log_path}"

    def _stderr_hint(self) -> str:
        try:
            tail = self.log_path.read_text(encoding="utf-8", errors="replace")[-STDERR_TAIL:]
        except OSError:
            return ""
        tail = " ".join(tail.split())
        return f"its stderr ends: {tail!r}; " if tail else ""


@asynccontextmanager
async def _closing(inner: Any, file: Any) -> AsyncIterator[Any]:
    try:
        async with inner as streams:
            yield streams
    finally:
        file.close()


def server_environment(extra: dict[str, str], pass_env: Sequence[str] = ()) -> dict[str, str]:
    """The environment a stdio server starts with: the one agent commands get (secret
    variables removed unless `[shell] pass_env` names them), plus the server's own `env`,
    where a server's credentials belong (`env = { GITHUB_TOKEN = "${GITHUB_TOKEN}" }`).
    (The SDK's default would pass only PATH, HOME and a few more, so tools installed with
    version managers would fail.)"""
    from loom.tools.agent_env import agent_environ

    env = agent_environ(pass_env)
    env.update(extra)
    return env


def _innermost(exc: BaseException) -> BaseException:
    """The first leaf of an exception group (anyio task groups wrap failures)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


async def _list_all_tools(client: Any) -> list[Any]:
    tools: list[Any] = []
    cursor: str | None = None
    for _ in range(100):  # a server whose pages never end cannot hang the start
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _loom_version() -> str:
    from loom import __version__

    return __version__
