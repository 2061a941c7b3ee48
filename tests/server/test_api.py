"""The HTTP API on SQLite and PostgreSQL: writes, optimistic locking, reads, listing."""

from __future__ import annotations

import random
import string

import pytest

from loom.core.messages import UserMessage
from tests.support.server import JSON, body, put
from tests.support.threads import thread_with


def test_health_is_open_and_names_the_database(backend) -> None:
    response = backend.client.get("/health")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"
    assert response.json()["database"].startswith(backend.name)


def test_every_api_route_needs_a_valid_token(backend) -> None:
    thread = thread_with("hello")
    for method, path in [
        ("GET", "/api/threads"),
        ("GET", "/api/threads/search?q=x"),
        ("GET", f"/api/threads/{thread.id}"),
        ("DELETE", f"/api/threads/{thread.id}"),
        ("GET", "/api/me"),
    ]:
        anonymous = backend.client.request(method, path)
        assert anonymous.status_code == 401, path
        assert "bearer" in anonymous.json()["detail"].lower()
        wrong = backend.client.request(method, path, headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401, path


def test_create_read_update_and_conflict(backend) -> None:
    _, me = backend.user()
    thread = thread_with("fix the login bug", "reading auth.py")
    created = put(backend, me, thread, 0)
    assert created.status_code == 201
    assert created.json() == {"id": thread.id, "version": thread.version, "created": True}

    fetched = backend.client.get(f"/api/threads/{thread.id}", headers=me).json()
    assert fetched["conversation"] == thread.model_dump(mode="json")["conversation"]

    thread.append(UserMessage(content="now add tests"))
    thread.touch()
    updated = put(backend, me, thread, thread.version - 1)
    assert updated.status_code == 200 and updated.json()["version"] == thread.version

    stale = put(backend, me, thread, thread.version - 1)
    assert stale.status_code == 409
    conflict = stale.json()
    assert conflict["server_version"] == thread.version
    assert len(conflict["server_thread"]["conversation"]["messages"]) == 3
    assert "expected_version" in conflict["detail"]


def test_a_write_that_drops_history_is_refused(backend) -> None:
    _, me = backend.user()
    thread = thread_with("one", "two", "three")
    assert put(backend, me, thread, 0).status_code == 201
    rewritten = thread.model_copy(deep=True)
    rewritten.conversation.messages = rewritten.conversation.messages[:2]
    rewritten.append(UserMessage(content="a different third"))
    rewritten.version = thread.version + 1
    response = put(backend, me, rewritten, thread.version)
    assert response.status_code == 409
    assert "history" in response.json()["detail"]


def test_version_must_grow(backend) -> None:
    _, me = backend.user()
    thread = thread_with("one")
    assert put(backend, me, thread, 0).status_code == 201
    assert put(backend, me, thread, thread.version).status_code == 409


def test_post_creates_and_refuses_duplicates(backend) -> None:
    _, me = backend.user()
    thread = thread_with("posted")
    first = backend.client.post("/api/threads", content=body(thread), headers={**me, **JSON})
    assert first.status_code == 201
    again = backend.client.post("/api/threads", content=body(thread), headers={**me, **JSON})
    assert again.status_code == 409


def test_list_is_paginated_newest_first_without_gaps(backend) -> None:
    _, me = backend.user()
    ids = []
    for i in range(7):
        thread = thread_with(f"thread {i}")
        thread.last_activity_at = f"2026-01-0{i + 1}T00:00:00.000Z"
        assert put(backend, me, thread, 0).status_code == 201
        ids.append(thread.id)
    seen: list[str] = []
    cursor = None
    while True:
        params = {"limit": 3, "mine": "true", **({"cursor": cursor} if cursor else {})}
        page = backend.client.get("/api/threads", params=params, headers=me).json()
        seen.extend(t["id"] for t in page["threads"])
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert seen == list(reversed(ids))


def test_soft_delete_hides_the_thread(backend) -> None:
    _, me = backend.user()
    thread = thread_with("to delete")
    assert put(backend, me, thread, 0).status_code == 201
    assert backend.client.delete(f"/api/threads/{thread.id}", headers=me).status_code == 204
    assert backend.client.get(f"/api/threads/{thread.id}", headers=me).status_code == 404
    listed = backend.client.get("/api/threads", params={"mine": "true"}, headers=me).json()
    assert thread.id not in [t["id"] for t in listed["threads"]]
    # The owner writing it again brings it back (nothing is lost after a delete race).
    thread.touch()
    assert put(backend, me, thread, 0).status_code == 200
    assert backend.client.get(f"/api/threads/{thread.id}", headers=me).status_code == 200


@pytest.mark.parametrize("bitmap_below", [0, 10**9])  # both PostgreSQL plans
def test_search_ranks_and_highlights(backend, bitmap_below: int, monkeypatch) -> None:
    monkeypatch.setattr("loom.server.search.BITMAP_BELOW", bitmap_below)
    _, me = backend.user()
    word = "zanzibar" + "".join(random.choices(string.ascii_lowercase, k=8))
    strong = thread_with(f"{word} crash in {word} handler", f"the {word} fix")
    weak = thread_with("unrelated start", f"a mention of {word} at the end")
    other = thread_with("nothing to see")
    for thread in (strong, weak, other):
        assert put(backend, me, thread, 0).status_code == 201
    result = backend.client.get("/api/threads/search", params={"q": word}, headers=me).json()
    hits = result["hits"]
    assert [h["id"] for h in hits] == [strong.id, weak.id]
    assert hits[0]["rank"] > hits[1]["rank"]
    assert f"[{word}]" in hits[0]["snippet"]

    # The search index follows deletes and changes of visibility.
    backend.client.delete(f"/api/threads/{weak.id}", headers=me)
    result = backend.client.get("/api/threads/search", params={"q": word}, headers=me).json()
    assert [h["id"] for h in result["hits"]] == [strong.id]
    _, stranger = backend.user()
    result = backend.client.get("/api/threads/search", params={"q": word}, headers=stranger)
    assert result.json()["hits"] == []
    backend.client.post(
        f"/api/threads/{strong.id}/share", json={"visibility": "public"}, headers=me
    )
    result = backend.client.get("/api/threads/search", params={"q": word}, headers=stranger)
    assert [h["id"] for h in result.json()["hits"]] == [strong.id]


def test_listing_columns_are_denormalised(backend) -> None:
    _, me = backend.user()
    thread = thread_with("denorm", "reply", git_branch="feature/x", git_remote_url="github.com/a/b")
    assert put(backend, me, thread, 0).status_code == 201
    item = backend.client.get("/api/threads", params={"mine": "true"}, headers=me).json()[
        "threads"
    ][0]
    assert item["title"] == "denorm"
    assert item["message_count"] == 2
    assert item["git_branch"] == "feature/x"
    assert item["agent_state_kind"] == "WaitingForUserInput"
