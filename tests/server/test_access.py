"""Who may read and write which thread: owner, organization, public, private, support."""

from __future__ import annotations

import pytest

from tests.support.server import put
from tests.support.threads import thread_with

VIS = ["organization", "private", "public"]


@pytest.mark.parametrize("visibility", VIS)
def test_read_rules(backend, visibility: str) -> None:
    org, owner = backend.user()
    _, colleague = backend.user(org)
    _, stranger = backend.user()
    _, support = backend.user(support=True)
    thread = thread_with(f"secret plans {visibility}", visibility=visibility)
    assert put(backend, owner, thread, 0).status_code == 201

    def status(headers: dict[str, str]) -> int:
        return backend.client.get(f"/api/threads/{thread.id}", headers=headers).status_code

    assert status(owner) == 200
    assert status(colleague) == (404 if visibility == "private" else 200)
    assert status(stranger) == (200 if visibility == "public" else 404)
    assert status(support) == (200 if visibility == "public" else 404)

    def listed(headers: dict[str, str]) -> bool:
        result = backend.client.get(
            "/api/threads/search", params={"q": f"secret plans {visibility}"}, headers=headers
        ).json()
        return thread.id in [h["id"] for h in result["hits"]]

    assert listed(owner)
    assert listed(colleague) == (visibility != "private")
    assert listed(stranger) == (visibility == "public")


def test_support_flag_opens_a_thread_to_support_only(backend) -> None:
    _, owner = backend.user()
    _, support = backend.user(support=True)
    _, stranger = backend.user()
    thread = thread_with("help me", visibility="private", is_shared_with_support=True)
    assert put(backend, owner, thread, 0).status_code == 201
    path = f"/api/threads/{thread.id}"
    assert backend.client.get(path, headers=support).status_code == 200
    assert backend.client.get(path, headers=stranger).status_code == 404
    shared = backend.client.post(
        f"{path}/share", json={"is_shared_with_support": False}, headers=owner
    )
    assert shared.status_code == 200 and shared.json()["version"] == thread.version + 1
    assert backend.client.get(path, headers=support).status_code == 404


def test_only_the_owner_writes(backend) -> None:
    org, owner = backend.user()
    _, colleague = backend.user(org)
    _, stranger = backend.user()
    thread = thread_with("mine")
    assert put(backend, owner, thread, 0).status_code == 201
    thread.touch()
    assert put(backend, colleague, thread, thread.version - 1).status_code == 403
    assert put(backend, stranger, thread, thread.version - 1).status_code == 404
    path = f"/api/threads/{thread.id}"
    assert backend.client.delete(path, headers=colleague).status_code == 403
    assert backend.client.delete(path, headers=stranger).status_code == 404
    share = backend.client.post(f"{path}/share", json={"visibility": "public"}, headers=colleague)
    assert share.status_code == 403


def test_public_share_link_opens_without_a_token(backend) -> None:
    _, owner = backend.user()
    thread = thread_with("look at this")
    assert put(backend, owner, thread, 0).status_code == 201
    path = f"/api/threads/{thread.id}/share"
    info = backend.client.get(path, headers=owner).json()
    assert info["share_url"] is None  # organization threads have no open link
    info = backend.client.post(path, json={"visibility": "public"}, headers=owner).json()
    assert info["share_url"] and len(info["share_path"]) > 30
    opened = backend.client.get(info["share_path"])
    assert opened.status_code == 200 and opened.json()["id"] == thread.id
    backend.client.post(path, json={"visibility": "organization"}, headers=owner)
    assert backend.client.get(info["share_path"]).status_code == 404
    assert backend.client.get("/shared/guessed-token").status_code == 404


def test_revoked_token_is_refused(backend) -> None:
    import asyncio

    from loom.server.db import make_engine, session_factory
    from loom.server.identity import revoke_token

    _, me = backend.user()
    assert backend.client.get("/api/me", headers=me).status_code == 200
    token = me["Authorization"].split()[1]

    async def revoke() -> None:
        engine = make_engine(backend.url)
        async with session_factory(engine)() as session:
            await revoke_token(session, token)
            await session.commit()
        await engine.dispose()

    asyncio.run(revoke())
    assert backend.client.get("/api/me", headers=me).status_code == 401
