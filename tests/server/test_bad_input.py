"""Bad input is a 4xx with a message, never a 500."""

from __future__ import annotations

import json

import pytest

from tests.support.server import JSON, body, put
from tests.support.threads import thread_with


def test_malformed_json_and_wrong_types(backend) -> None:
    _, me = backend.user()
    thread = thread_with("x")
    path = f"/api/threads/{thread.id}"
    headers = {**me, **JSON}
    assert backend.client.put(path, content=b"{not json", headers=headers).status_code == 422
    data = thread.model_dump(mode="json")
    for field, value in [
        ("version", "seven"),
        ("conversation", []),
        ("is_private", {"a": 1}),
        ("version", 2**70),
        ("last_activity_at", "yesterday"),
    ]:
        bad = {**data, field: value}
        response = backend.client.put(path, content=json.dumps(bad), headers=headers)
        assert response.status_code == 422, (field, response.text)
        assert response.json()["detail"]


def test_oversized_body_is_413(backend) -> None:
    _, me = backend.user()
    thread = thread_with("x" * 300_000)
    response = put(backend, me, thread, 0)
    assert response.status_code == 413
    assert "limit" in response.json()["detail"]


@pytest.mark.parametrize(
    "bad_id",
    ["T-123", "thread", "T-01a20141-d203-4171-8d70-9949edaadedb", "'; DROP TABLE threads; --"],
)
def test_ids_must_be_t_uuidv7(backend, bad_id: str) -> None:
    _, me = backend.user()
    assert backend.client.get(f"/api/threads/{bad_id}", headers=me).status_code in (404, 422)
    thread = thread_with("x")
    thread.id = "T-123"
    response = backend.client.post("/api/threads", content=body(thread), headers={**me, **JSON})
    assert response.status_code == 422


def test_body_id_must_match_the_url(backend) -> None:
    _, me = backend.user()
    a, b = thread_with("a"), thread_with("b")
    response = backend.client.put(f"/api/threads/{a.id}", content=body(b), headers={**me, **JSON})
    assert response.status_code == 422


def test_private_threads_are_refused(backend) -> None:
    _, me = backend.user()
    thread = thread_with("local only", is_private=True)
    response = put(backend, me, thread, 0)
    assert response.status_code == 422 and "private" in response.json()["detail"]


@pytest.mark.parametrize(
    "query",
    [
        "' OR 1=1; --",
        "a & | ! b",
        "foo:*",
        '"unbalanced',
        "(((",
        "NEAR(a b)",
        "*",
        "-",
        "a OR",
        "title:secret",
        "\\",
        "%_%",
        "🦀 unicode",
        "x" * 500,
        "\u0000",
    ],
)
def test_search_syntax_is_just_text(backend, query: str) -> None:
    _, me = backend.user()
    response = backend.client.get("/api/threads/search", params={"q": query}, headers=me)
    assert response.status_code == 200, response.text
    assert isinstance(response.json()["hits"], list)


def test_nul_characters_in_content_are_stored(backend) -> None:
    _, me = backend.user()
    thread = thread_with("nul \u0000 inside", git_branch="b\u0000r")
    assert put(backend, me, thread, 0).status_code == 201
    back = backend.client.get(f"/api/threads/{thread.id}", headers=me).json()
    assert back["conversation"]["messages"][0]["content"] == "nul \u0000 inside"


def test_bad_cursor_and_limits(backend) -> None:
    _, me = backend.user()
    assert (
        backend.client.get("/api/threads", params={"cursor": "garbage!"}, headers=me).status_code
        == 400
    )
    assert backend.client.get("/api/threads", params={"limit": 0}, headers=me).status_code == 422
    assert (
        backend.client.get("/api/threads", params={"limit": 10**6}, headers=me).status_code == 422
    )
    assert (
        backend.client.get("/api/threads/search", params={"q": ""}, headers=me).status_code == 422
    )
