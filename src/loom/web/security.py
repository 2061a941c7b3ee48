"""Who may talk to `loom web`: the checks every request passes before any route runs.

The page drives a shell on this machine, so:

- **Host** must name the address the server is bound to (`127.0.0.1:PORT`, or
  `localhost:PORT` on loopback): a DNS-rebinding page cannot reach us by a name of its own.
- **Token:** a random token per launch. It arrives once in the URL (`/?token=...`), is
  turned into an `HttpOnly; SameSite=Strict` cookie and the URL is cleaned by a redirect.
  Any request without a matching cookie gets 401.
- **Origin:** a request that changes state (anything but GET/HEAD/OPTIONS) must carry an
  `Origin` naming this server (a page elsewhere cannot post to us with our cookie).

Plain ASGI middleware, so it guards the SSE stream and the static files alike.
"""

from __future__ import annotations

import hmac
import html
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})
WILDCARD = frozenset({"0.0.0.0", "::"})

# Every response: no framing, no sniffing, no referrer, and scripts only from us.
SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    ),
]


def new_token() -> str:
    return secrets.token_urlsafe(32)


@dataclass
class Guard:
    """What a request must match: the bound host and port, and the launch token."""

    host: str
    port: int
    token: str = field(default_factory=new_token)
    _allowed: set[str] | None = field(default=None, repr=False)
    # called when a browser arrives with the token in its URL (the launch page is done)
    on_token_used: Callable[[], None] | None = field(default=None, repr=False)

    @property
    def cookie_name(self) -> str:
        # cookies ignore ports: two `loom web` on one machine must not clobber each other
        return f"loom_token_{self.port}"

    def allowed_hosts(self) -> set[str]:
        if self._allowed is None:
            self._allowed = self._host_names()
        return self._allowed

    def _host_names(self) -> set[str]:
        names = {self.host}
        if self.host in LOOPBACK or self.host in WILDCARD:
            names |= {"127.0.0.1", "localhost", "[::1]"}
        if self.host in WILDCARD:  # every address of this machine names the server
            names |= _this_machine()
        if ":" in self.host and not self.host.startswith("["):
            names.add(f"[{self.host}]")  # an IPv6 address as a Host header writes it
        return {f"{name}:{self.port}" for name in names}

    def host_ok(self, host_header: str | None) -> bool:
        return host_header is not None and host_header.lower() in self.allowed_hosts()

    def origin_ok(self, origin: str | None) -> bool:
        prefix = "http://"
        if not origin or not origin.lower().startswith(prefix):
            return False
        return origin[len(prefix) :].lower() in self.allowed_hosts()

    def token_ok(self, candidate: str | None) -> bool:
        return candidate is not None and hmac.compare_digest(candidate, self.token)

    def url(self, path: str = "/") -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{shown}:{self.port}{path}?token={self.token}"


class GuardMiddleware:
    def __init__(self, app: Callable[..., Awaitable[None]], guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        guard = self.guard
        if not guard.host_ok(headers.get("host")):
            await _plain(send, 421, "This Loom server answers only to its own address.")
            return
        method = scope["method"]
        if method not in SAFE_METHODS and not guard.origin_ok(headers.get("origin")):
            await _plain(send, 403, "Cross-origin request refused (Origin missing or foreign).")
            return
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        if method == "GET" and "token" in query:
            if not guard.token_ok(query["token"]):
                await _plain(send, 401, UNAUTHORIZED)
                return
            if guard.on_token_used is not None:
                guard.on_token_used()
            cross_site = headers.get("sec-fetch-site") == "cross-site"
            await _redirect_with_cookie(send, scope, query, guard, cross_site)
            return
        if not guard.token_ok(_cookies(headers.get("cookie", "")).get(guard.cookie_name)):
            await _plain(send, 401, UNAUTHORIZED)
            return

        async def send_with_headers(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers)


UNAUTHORIZED = (
    "Loom needs its launch token. Open the URL that `loom web` printed (it carries "
    "?token=...), or restart `loom web` for a new one."
)


def _this_machine() -> set[str]:
    """This machine's host names and addresses (for a server bound to all of them)."""
    import socket

    names = {socket.gethostname(), socket.getfqdn()}
    for name in list(names):
        try:
            infos = socket.getaddrinfo(name, None)
        except OSError:
            continue
        for info in infos:
            address = str(info[4][0])
            names.add(f"[{address}]" if ":" in address else address)
    return {n.lower() for n in names if n}


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


def _cookies(header: str) -> dict[str, str]:
    jar = {}
    for part in header.split(";"):
        name, _, value = part.strip().partition("=")
        if name:
            jar[name] = value
    return jar


async def _plain(send: Send, status: int, text: str) -> None:
    body = text.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                *SECURITY_HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _redirect_with_cookie(
    send: Send, scope: Scope, query: dict[str, str], guard: Guard, cross_site: bool
) -> None:
    """The token as a cookie, and on to the same URL without it. Arriving from another
    site (the launch page `loom web` opens is a file), a redirect would still count as
    that site's navigation and the SameSite=Strict cookie would not be sent: the page
    moves on by itself instead, as our own navigation."""
    rest = {k: v for k, v in query.items() if k != "token"}
    location = scope["path"] + (f"?{urlencode(rest)}" if rest else "")
    cookie = f"{guard.cookie_name}={guard.token}; Path=/; HttpOnly; SameSite=Strict"
    body = b""
    status, headers = 303, [(b"location", location.encode("latin-1"))]
    if cross_site:
        target = html.escape(location, quote=True)
        body = (
            f'<!doctype html><meta http-equiv="refresh" content="0;url={target}">'
            f'<a href="{target}">Open Loom</a>'
        ).encode()
        status, headers = 200, [(b"content-type", b"text/html; charset=utf-8")]
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                *headers,
                (b"set-cookie", cookie.encode("latin-1")),
                (b"cache-control", b"no-store"),
                (b"content-length", str(len(body)).encode()),
                *SECURITY_HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
