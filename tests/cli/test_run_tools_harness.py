"""`loom run` against the fake LLM server: todo_write (the stream-json event, the thread
file) and web_fetch (Markdown, final URL, permissions, the SSRF guard)."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.loom_cli import Done, lines
from tests.support.threads import thread_file
from tests.support.wire import tool_results

PLAN = [
    {"content": "Read the code", "status": "completed"},
    {"content": "Fix the bug", "status": "in_progress"},
    {"content": "Run the tests", "status": "pending"},
]


def test_todo_write_streams_the_list_and_the_thread_keeps_the_latest(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    server.add(Turn(tool_calls=[FakeToolCall("todo_write", {"todos": PLAN[:2]})]))
    # some models send the list as a JSON string, with extra keys: accepted
    as_text = json.dumps([{**item, "activeForm": "x"} for item in PLAN])
    server.add(Turn(tool_calls=[FakeToolCall("todo_write", {"todos": as_text})]))
    server.add(Turn(text="done"))
    done = cli(["run", "-p", "fix it", "-o", "stream-json"], project, server)
    assert done.returncode == 0, done.stderr  # todo_write never asks, even without --yes
    events = [e for e in lines(done.stdout) if e["type"] == "loom.todo_list"]
    assert [e["todos"] for e in events] == [PLAN[:2], PLAN]
    assert events[0]["source"] == "agent"
    result = tool_results(server.requests[2])[-1]
    assert "Todo list updated (1/3 done)" in result and "[~] Fix the bug" in result
    thread_id = lines(done.stdout)[-1]["thread_id"]
    assert thread_file(thread_id)["todos"] == PLAN


def test_todo_write_bad_list_is_a_clear_tool_error(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    bad = {"todos": [{"content": "x", "status": "doing"}]}
    server.add(Turn(tool_calls=[FakeToolCall("todo_write", bad)]))
    server.add(Turn(text="ok"))
    done = cli(["run", "-p", "plan", "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr
    result = tool_results(server.requests[1])[0]
    assert "status 'doing'" in result and "pending, in_progress, completed" in result
    assert "todos" not in thread_file(json.loads(done.stdout)["thread_id"])


class _Pages(http.server.BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if self.path == "/old":
            self.send_response(301)
            self.send_header("Location", "/docs")
            self.end_headers()
            return
        if self.path == "/to-metadata":
            self.send_response(302)
            self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
            self.end_headers()
            return
        body = (
            b"<html><head><title>Docs</title><style>h1{color:red}</style>"
            b"<script>steal()</script></head><body><h1>Install</h1>"
            b"<p>Run <code>pip install x</code>, see <a href='/faq'>the FAQ</a>.</p>"
            b"<pre><code>x.run()\n</code></pre></body></html>"
        )
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def site() -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def allow_loopback(loom_home: Path) -> None:
    config = loom_home / "config"
    config.mkdir(exist_ok=True)
    (config / "config.toml").write_text('[web_fetch]\nallow_hosts = ["127.0.0.1"]\n')


def test_web_fetch_returns_markdown_and_the_final_url(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path, site: str, loom_home: Path
) -> None:
    allow_loopback(loom_home)
    server.add(Turn(tool_calls=[FakeToolCall("web_fetch", {"url": f"{site}/old"})]))
    server.add(Turn(text="read it"))
    done = cli(["run", "-p", "read the docs", "--yes"], project, server)
    assert done.returncode == 0, done.stderr
    result = tool_results(server.requests[1])[0]
    assert result.startswith(f"URL: {site}/docs\n(redirected from {site}/old)")
    assert "# Install" in result and f"[the FAQ]({site}/faq)" in result
    assert "```\nx.run()\n```" in result
    assert "steal()" not in result and "color:red" not in result


def test_web_fetch_refuses_loopback_and_redirects_into_private_space(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path, site: str, loom_home: Path
) -> None:
    server.add(Turn(tool_calls=[FakeToolCall("web_fetch", {"url": f"{site}/docs"})]))
    server.add(Turn(text="ok"))
    done = cli(["run", "-p", "fetch", "--yes"], project, server)
    assert done.returncode == 0, done.stderr
    refused = tool_results(server.requests[1])[0]
    assert "127.0.0.1 is a loopback address" in refused and "[web_fetch] allow_hosts" in refused
    allow_loopback(loom_home)  # loopback allowed: a redirect to link-local is still refused
    server.add(Turn(tool_calls=[FakeToolCall("web_fetch", {"url": f"{site}/to-metadata"})]))
    server.add(Turn(text="ok"))
    done = cli(["run", "-p", "fetch", "--yes"], project, server)
    assert done.returncode == 0, done.stderr
    assert "169.254.169.254 is a link-local address" in tool_results(server.requests[3])[0]


def test_web_fetch_asks_like_a_network_tool(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path, site: str, loom_home: Path
) -> None:
    allow_loopback(loom_home)
    server.add(Turn(tool_calls=[FakeToolCall("web_fetch", {"url": f"{site}/docs"})]))
    server.add(Turn(text="ok"))
    done = cli(["run", "-p", "fetch"], project, server)  # no --yes: nobody can approve
    assert done.returncode == 0, done.stderr
    assert "refused web_fetch 127.0.0.1:" in done.stderr
    assert tool_results(server.requests[1])[0].startswith("Refused: web_fetch")
