"""Text and numbers JSON can carry but the server cannot store: always a 4xx with a
reason, never a 500, and the same keep-alive connection goes on working.

Runs against a real `loom server` process (uvicorn) over one HTTP/1.1 connection.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator

import pytest

from tests.support.server import LiveServer, add_user, migrate
from tests.support.threads import thread_with


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, str]]:
    home = tmp_path_factory.mktemp("bad-text-server")
    url = migrate(f"sqlite+aiosqlite:///{home / 'server.db'}")
    server = LiveServer(url, home).start()
    try:
        yield server, add_user(url, "ana", "acme")
    finally:
        server.stop()


def _good_body() -> tuple[str, str]:
    thread = thread_with("hello", "hi there")
    return thread.id, json.dumps(thread.model_dump(mode="json"))


def _replace_version(raw: str, literal: str) -> str:
    data = json.loads(raw)
    marker = "__VERSION__"
    data["version"] = marker
    return json.dumps(data).replace(f'"{marker}"', literal)


def _with_text(raw: str, where: str, escaped: str) -> str:
    """The body with a JSON string literal (escapes kept as written) at `where`."""
    data = json.loads(raw)
    marker = "__TEXT__"
    if where == "title":
        data["metadata"]["title"] = marker
    elif where == "content":
        data["conversation"]["messages"][0]["content"] = marker
    elif where == "tool_args":
        data["conversation"]["messages"][1]["tool_calls"] = [
            {"id": "c1", "tool_name": "file_read", "arguments_json": {"path": marker}}
        ]
    elif where == "branch":
        data["git_branch"] = marker
    elif where == "tag":
        data["metadata"]["tags"] = [marker]
    return json.dumps(data).replace(f'"{marker}"', f'"{escaped}"')


NUMBERS = ["1e400", "-1e400", "NaN", "Infinity", "-Infinity", "1.5", "1e18", "-1", "2e308"]
LONE = ["\\ud83d", "a\\ud83d", "\\ude00x", "\\ude00\\ud83d", "x\\udfff", "\\ud800\\ud800"]
WHERE = ["title", "content", "tool_args", "branch", "tag"]
CASES = [("version", n, None) for n in NUMBERS] + [
    ("text", esc, where) for esc in LONE for where in WHERE
]


def test_unstorable_bodies_are_4xx_and_the_connection_stays_usable(live) -> None:
    server, token = live
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=20)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def send(method: str, path: str, body: str | None = None) -> tuple[int, bytes]:
        conn.request(method, path, body=body.encode() if body else None, headers=headers)
        response = conn.getresponse()
        return response.status, response.read()

    assert send("GET", "/api/me")[0] == 200
    sock = conn.sock
    statuses = []
    for kind, value, where in CASES:
        thread_id, raw = _good_body()
        if kind == "version":
            body = _replace_version(raw, value)
        else:
            assert where is not None  # every text case names where the text goes
            body = _with_text(raw, where, value)
        for method, path in (("PUT", f"/api/threads/{thread_id}"), ("POST", "/api/threads")):
            status, payload = send(method, path, body)
            statuses.append(status)
            assert 400 <= status < 500, (kind, value, where, method, status, payload[:300])
            assert json.loads(payload)["detail"], payload
        # the connection still serves ordinary requests
        assert send("GET", "/api/me")[0] == 200
    assert conn.sock is sock, "the server closed the keep-alive connection"
    # A valid pair (an escaped emoji) is fine, and so is a replacement character.
    thread_id, raw = _good_body()
    status, _ = send(
        "PUT", f"/api/threads/{thread_id}", _with_text(raw, "content", "\\ud83d\\ude00")
    )
    assert status == 201
    thread_id, raw = _good_body()
    status, _ = send("PUT", f"/api/threads/{thread_id}", _with_text(raw, "title", "\\ufffd"))
    assert status == 201
    status, payload = send("GET", f"/api/threads/{thread_id}")
    assert status == 200 and json.loads(payload)["metadata"]["title"] == "\ufffd"
    assert len(statuses) == 2 * len(CASES)
    conn.close()


def test_share_and_search_refuse_bad_text_without_500(live) -> None:
    server, token = live
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=20)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    thread_id, raw = _good_body()
    conn.request("PUT", f"/api/threads/{thread_id}", body=raw.encode(), headers=headers)
    assert conn.getresponse().read() and True
    for body in ['{"visibility": "\\ud83d"}', '{"is_shared_with_support": 1e400}']:
        conn.request("POST", f"/api/threads/{thread_id}/share", body=body.encode(), headers=headers)
        response = conn.getresponse()
        assert response.status == 422, response.read()
        response.read()
    for query in ("%ED%A0%BD", "%F0%9F", "\\ud83d"):
        conn.request("GET", f"/api/threads/search?q={query}", headers=headers)
        response = conn.getresponse()
        assert response.status < 500, (query, response.status)
        response.read()
    conn.close()
