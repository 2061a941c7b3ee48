"""web_fetch's guard against SSRF (every resolved address checked, embedded IPv4 too,
allow_hosts), its permission subject (a grant covers a host), and shortening."""

from __future__ import annotations

from pathlib import Path

import pytest

from loom.permissions import Decision, PermissionPolicy
from loom.permissions.grants import GrantStore
from loom.tools._netguard import HostAllowList, Refused, check_url
from loom.tools.web_fetch import WebFetch, shorten


def resolver(table: dict[str, list[str]]):
    return lambda host, port: table[host]


PRIVATE = ["127.0.0.1", "10.0.0.5", "192.168.1.1", "172.16.0.1", "169.254.169.254", "::1",
           "fe80::1", "fd00::1", "::ffff:10.0.0.1", "2002:a00:1::", "64:ff9b::7f00:1",
           "0.0.0.0", "100.64.1.1"]  # fmt: skip


@pytest.mark.parametrize("address", PRIVATE)
def test_private_addresses_are_refused(address: str) -> None:
    with pytest.raises(Refused, match="allow_hosts"):
        check_url("http://example.test/", HostAllowList(), resolver({"example.test": [address]}))


def test_every_resolved_address_is_checked() -> None:
    table = resolver({"rebind.test": ["93.184.216.34", "127.0.0.1"]})
    with pytest.raises(Refused, match="loopback"):
        check_url("https://rebind.test/x", HostAllowList(), table)


def test_public_address_is_pinned() -> None:
    target = check_url("https://docs.test:8443/p", HostAllowList(),
                       resolver({"docs.test": ["93.184.216.34"]}))  # fmt: skip
    assert (target.address, target.host_header) == ("93.184.216.34", "docs.test:8443")


def test_allow_hosts_by_name_address_or_network() -> None:
    local = resolver({"intranet": ["10.1.2.3"]})
    assert check_url("http://intranet/", HostAllowList(["intranet"]), local).address == "10.1.2.3"
    assert check_url("http://intranet/", HostAllowList(["10.0.0.0/8"]), local)
    with pytest.raises(Refused):
        check_url("http://intranet/", HostAllowList(["192.168.0.0/16"]), local)


@pytest.mark.parametrize(
    ("url", "why"),
    [("file:///etc/passwd", "only http"), ("ftp://x/", "only http"),
     ("http://user:pw@example.test/", "user name"), ("http:///nohost", "names no host")],
)  # fmt: skip
def test_bad_urls(url: str, why: str) -> None:
    with pytest.raises(Refused, match=why):
        check_url(url, HostAllowList(), resolver({}))


def test_a_grant_covers_the_host(tmp_path: Path) -> None:
    tool = WebFetch(tmp_path)
    policy = PermissionPolicy(GrantStore(tmp_path, database=tmp_path / "grants.db"))
    first = {"url": "https://docs.python.org/3/library/"}
    assert policy.decide(tool, first) is Decision.ASK
    policy.record(tool, first, "allow_always")
    assert policy.decide(tool, {"url": "https://docs.python.org/3/tutorial/"}) is Decision.ALLOW
    assert policy.decide(tool, {"url": "https://evil.example/"}) is Decision.ASK
    assert policy.decide(tool, {"url": "https://docs.python.org:8443/"}) is Decision.ASK


def test_shorten_keeps_the_sections_matching_the_prompt() -> None:
    page = "\n".join(f"# Part {i}\n" + ("filler text " * 50) for i in range(20))
    page += "\n# Installation\npip install loom and configure the proxy\n"
    text, note = shorten(page, 1500, prompt="how to configure the proxy")
    assert "pip install loom" in text and "best match the prompt" in note
    cut, note = shorten(page, 1000)
    assert len(cut) <= 1000 and "cut at 1,000" in note
