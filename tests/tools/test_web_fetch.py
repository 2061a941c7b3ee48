"""web_fetch's guard against SSRF (every resolved address checked, embedded IPv4 too,
allow_hosts), its permission subject (a grant covers a host), shortening, and its limits
(size cap, compressed pages, timeout, non-text files) against a loopback server."""

from __future__ import annotations

import asyncio
import gzip
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loom.permissions import Decision, PermissionPolicy
from loom.permissions.grants import GrantStore
from loom.tools._netguard import HostAllowList, Refused, check_url
from loom.tools.base import ToolContext, ToolError, ToolResult
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


class _Site(http.server.BaseHTTPRequestHandler):
    """Pages that test web_fetch's limits. `release` lets the slow page's thread end."""

    release = threading.Event()

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        kind, body, extra = {
            "/big": ("text/plain", b"line of text\n" * 20_000, {}),
            "/bomb": ("text/plain", gzip.compress(bytes(50_000_000)), {"Content-Encoding": "gzip"}),
            "/zip": ("application/zip", b"PK\x03\x04" + bytes(100), {}),
            # `+ABs-` is ESC in UTF-7: an OSC 52 clipboard write out of harmless bytes
            "/utf7": ("text/plain; charset=utf-7", b"hi +ABs-]52;c;ZXZpbA==+AAc- there", {}),
            "/escape": ("text/html; charset=unicode_escape", b"<p>hi \\x1b[2J there</p>", {}),
            "/raw": (
                "text/plain; charset=utf-8",
                "a\x1b]8;;http://evil.example/\x1b\\b\x9b2J\u202ec\r\nd".encode(),
                {},
            ),
        }.get(self.path, ("text/plain", b"", {}))
        if self.path == "/slow":
            self.release.wait(30)
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in extra.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def site() -> Iterator[str]:
    _Site.release.clear()  # an earlier test's teardown set it: the slow page would not wait
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    _Site.release.set()
    httpd.shutdown()
    httpd.server_close()


def fetch(tmp_path: Path, url: str, **limits: Any) -> ToolResult:
    tool = WebFetch(tmp_path, allow_hosts=["127.0.0.1"], **limits)
    return asyncio.run(tool.run({"url": url}, ToolContext(project_root=tmp_path)))


def test_a_page_past_the_size_cap_is_cut_and_says_so(tmp_path: Path, site: str) -> None:
    result = fetch(tmp_path, f"{site}/big", max_bytes=10_000)
    assert "10,000 bytes (cut at the size cap)" in result.content
    assert result.metadata["bytes"] == 10_000


def test_a_compressed_page_inflates_only_to_the_size_cap(tmp_path: Path, site: str) -> None:
    result = fetch(tmp_path, f"{site}/bomb", max_bytes=100_000)
    assert result.metadata["bytes"] <= 100_000


def test_a_page_that_does_not_answer_in_time_is_a_clear_error(tmp_path: Path, site: str) -> None:
    with pytest.raises(ToolError, match=r"did not answer within 0.2 s; try again later"):
        fetch(tmp_path, f"{site}/slow", timeout=0.2)


def test_a_file_that_is_not_text_is_refused(tmp_path: Path, site: str) -> None:
    with pytest.raises(ToolError, match="is application/zip, not a page of text"):
        fetch(tmp_path, f"{site}/zip")


@pytest.mark.parametrize("page", ["utf7", "escape"])
def test_a_charset_that_spells_escapes_is_read_as_utf8(
    tmp_path: Path, site: str, page: str
) -> None:
    # Decoded as declared, these pages held a raw ESC that the REPL's tool card (and any
    # later print of the thread) would hand to the terminal.
    text = fetch(tmp_path, f"{site}/{page}").content
    assert "\x1b" not in text
    assert "+ABs-]52;c;ZXZpbA==+AAc-" in text if page == "utf7" else "\\x1b[2J" in text


def test_control_characters_in_a_page_reach_the_model_as_escapes(tmp_path: Path, site: str) -> None:
    text = fetch(tmp_path, f"{site}/raw").content
    assert not {"\x1b", "\x9b", "\r"} & set(text)
    assert "a\\x1b]8;;http://evil.example/\\x1b\\b\\x9b2J\u202ec\nd" in text  # bidi: for a terminal
