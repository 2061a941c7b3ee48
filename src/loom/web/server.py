"""Run `loom web`: bind the socket first (so port 0 works and the URL is exact), print
the URL with its token, open the browser, serve until Ctrl-C."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from loom.core.errors import LoomError
from loom.web.security import LOOPBACK, Guard

if TYPE_CHECKING:
    from loom.session import Workspace

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 4200
PROVIDER_PREWARM_DELAY = 2.0  # seconds after start: the first page comes first
LAUNCH_PAGE_S = 60.0  # the browser's launch page is removed by then at the latest


def _warm_pages(ws: Workspace) -> None:
    """What the first page needs, done before the URL is printed: the templates, the
    code colours, the thread index. Done later, it would compete with the provider's
    SDK import for the interpreter while the first page is asked for."""
    from loom.web.render import code_css
    from loom.web.views import env

    for name in ("session.html", "cost.html", "_parts.html"):
        env().get_template(name)
    code_css()
    with contextlib.suppress(Exception):  # a broken index is reported by the page itself
        ws.threads.list(limit=1)


def _prewarm_provider(ws: Workspace) -> None:
    """Markdown (its import compiles many patterns), then the default provider (an SDK
    import, 1-2 s), so the first message waits for neither; started once the first
    page has had time to load."""
    from loom.web.render import markdown

    markdown("`warm`")
    ws.prewarm()


def _is_loopback(host: str) -> bool:
    import ipaddress

    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _close_before_dying(close: Callable[[], None]) -> None:
    """Run `close` when SIGTERM ends the process: uvicorn stops gracefully, restores the
    handler it found and raises the signal again, which then lands here."""

    def on_term(signum: int, _frame: Any) -> None:
        close()
        signal.signal(signum, signal.SIG_DFL)
        signal.raise_signal(signum)

    with contextlib.suppress(ValueError):  # not the main thread (tests): the finally does it
        signal.signal(signal.SIGTERM, on_term)


class BindError(LoomError, OSError):
    """The page's address cannot be listened on (taken, or no such interface)."""


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        hint = "pick another with --port (0 picks a free one)" if port else "check --host"
        raise BindError(f"cannot listen on {host}:{port}: {exc.strerror or exc}; {hint}") from exc
    sock.listen(128)
    sock.setblocking(False)
    return sock


def warning_for(host: str) -> str | None:
    if host in LOOPBACK or _is_loopback(host):
        return None
    return (
        f"WARNING: listening on {host}, not only on this machine. Anyone who can reach this "
        "address and learns the token can read your threads and run commands here: the "
        "token in the URL is then the ONLY protection. Use --host only on a network you trust."
    )


async def serve(
    ws: Workspace,
    host: str,
    port: int,
    *,
    open_browser: bool = True,
    out: TextIO | None = None,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    import uvicorn

    from loom.web.app import create_app

    out = out or sys.stdout
    sock = bind(host, port)
    guard = Guard(host=host, port=sock.getsockname()[1])
    config = uvicorn.Config(
        create_app(ws, guard),
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=3,
        ws="none",
    )
    server = uvicorn.Server(config)
    await asyncio.to_thread(_warm_pages, ws)
    url = guard.url("/")
    warning = warning_for(host)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    print(f"Loom is ready at {url}", file=out, flush=True)
    print("Press Ctrl-C to stop.", file=out, flush=True)
    if on_ready is not None:
        on_ready(url)
    launch = None
    if open_browser:
        from loom.web.launch import BrowserLaunch

        with contextlib.suppress(Exception):
            launch = BrowserLaunch(url)  # the token stays off the browser's command line
            _close_before_dying(launch.close)
            # The page holds the token in the system temp folder, which sandboxed commands
            # read (and, given the network, could use it): gone once the browser has it.
            guard.on_token_used = launch.close
            asyncio.get_running_loop().call_later(LAUNCH_PAGE_S, launch.close)
            await asyncio.to_thread(launch.open)
    loop = asyncio.get_running_loop()
    # a daemon thread, not the loop's executor: Ctrl-C must not wait for an SDK import
    prewarm = threading.Thread(target=_prewarm_provider, args=(ws,), daemon=True)
    loop.call_later(PROVIDER_PREWARM_DELAY, prewarm.start)
    try:
        await server.serve(sockets=[sock])
    finally:
        if launch is not None:
            launch.close()
