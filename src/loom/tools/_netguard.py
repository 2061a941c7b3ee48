"""Which addresses `web_fetch` may connect to: no SSRF into the person's own machine or
network (their services, a cloud metadata endpoint, Loom's own web UI).

A URL's host is resolved and *every* address it resolves to must be public, else the
fetch is refused, unless `[web_fetch] allow_hosts` lists the host name, the address, or
a network holding it ("localhost", "127.0.0.1", "10.0.0.0/8"). The connection then goes
to an address that was checked (the request is pinned to it), so a name that resolves
differently a moment later (DNS rebinding) cannot slip through. Addresses that embed an
IPv4 address (IPv4-mapped, 6to4, Teredo, NAT64) are judged on the embedded one.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Sequence[str]]  # (host, port) -> addresses
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class Refused(ValueError):
    """The URL may not be fetched; the message says why and what would allow it."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str  # lower-case, no brackets
    port: int
    address: str  # the checked address to connect to
    url: str  # the URL as given (normalised by httpx later)

    @property
    def host_header(self) -> str:
        default = 443 if self.scheme == "https" else 80
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == default else f"{host}:{self.port}"


class HostAllowList:
    """`[web_fetch] allow_hosts`: names (exact, lower-case), addresses and networks."""

    def __init__(self, entries: Iterable[str] = ()) -> None:
        self.names: set[str] = set()
        self.networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for entry in entries:
            text = entry.strip().lower().strip("[]")
            if not text:
                continue
            try:
                self.networks.append(ipaddress.ip_network(text, strict=False))
            except ValueError:
                self.names.add(text.rstrip("."))

    def allows_name(self, host: str) -> bool:
        return host in self.names

    def allows_address(self, address: IpAddress) -> bool:
        return any(address in net for net in self.networks if net.version == address.version)


def system_resolver(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def why_not_public(address: IpAddress) -> str | None:
    """Why an address is off limits ("loopback", "private", ...), or None if public."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address.teredo is not None:
            embedded = address.teredo[1]
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            return why_not_public(embedded)
        if address.scope_id:
            return "link-local"
    for name, flag in (
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("private", address.is_private),
        ("multicast", address.is_multicast),
        ("unspecified", address.is_unspecified),
        ("reserved", address.is_reserved),
    ):
        if flag:
            return name
    if not address.is_global:
        return "not a public address"
    return None


def check_url(url: str, allow: HostAllowList, resolver: Resolver = system_resolver) -> Target:
    """The checked target of `url`, or Refused. Resolves the host (blocking: call it off
    the event loop)."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise Refused(f"only http and https URLs can be fetched, not {scheme or 'no scheme'!r}")
    if parts.username is not None or parts.password is not None:
        raise Refused("URLs with a user name or password in them are not fetched")
    host = (parts.hostname or "").lower().rstrip(".")
    if not host:
        raise Refused(f"{url!r} names no host")
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        raise Refused(f"{url!r} has an invalid port") from None
    named_ok = allow.allows_name(host)
    try:
        literal: IpAddress | None = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        addresses = [host]
    else:
        try:
            addresses = list(resolver(host, port))
        except (OSError, UnicodeError) as exc:
            raise Refused(f"cannot resolve {host}: {exc}") from None
        if not addresses:
            raise Refused(f"{host} resolves to no address")
    for text in addresses:
        address = ipaddress.ip_address(text.split("%", 1)[0])
        reason = why_not_public(address)
        if reason and not named_ok and not allow.allows_address(address):
            shown = host if literal is not None else f"{host} ({address})"
            raise Refused(
                f"{shown} is a {reason} address: web_fetch reaches public hosts only, so "
                "it cannot be pointed at this machine or its network. The person can list "
                f'the host under [web_fetch] allow_hosts (e.g. allow_hosts = ["{host}"]).'
            )
    return Target(scheme, host, port, addresses[0].split("%", 1)[0], url)
