"""The sync commands through the real CLI: login, logout, sync, share, --remote."""

from __future__ import annotations

import json
import stat

import pytest
import typer
from typer.testing import CliRunner

from loom.cli.app import build_app
from loom.cli.remote import remote_list, remote_search
from loom.paths import LoomPaths
from loom.store.factory import open_thread_store
from loom.store.local import LocalThreadStore
from loom.store.syncing import SyncingThreadStore
from tests.support.server import free_port
from tests.support.threads import thread_with

runner = CliRunner()


def loom(*args: str) -> tuple[int, str]:
    result = runner.invoke(build_app(), list(args))
    return result.exit_code, result.output


def login(server) -> str:
    token = server.token()
    code, output = loom("login", "--server", server.url, "--token", token, "--json")
    assert code == 0, output
    return token


def test_login_checks_the_token_and_keeps_it_private(server) -> None:
    code, output = loom("login", "--server", server.url, "--token", "loom_wrong")
    assert code == 1 and "login failed" in output and "loom_wrong" not in output
    code, output = loom("login", "--server", "not a url", "--token", "x")
    assert code == 1 and "not a URL" in output

    token = login(server)
    path = LoomPaths.from_env().config / "credentials.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text())["token"] == token

    store = open_thread_store(LoomPaths.from_env(), background=False)
    try:
        assert isinstance(store, SyncingThreadStore)
        from loom.store.credentials import load_credentials

        assert token not in repr(load_credentials(LoomPaths.from_env()))
    finally:
        store.close()

    code, output = loom("logout")
    assert code == 0 and "logged out" in output
    assert not path.exists()
    assert isinstance(open_thread_store(LoomPaths.from_env()), LocalThreadStore)


def test_sync_pushes_pending_and_pulls(server) -> None:
    code, output = loom("sync")
    assert code == 1 and "not logged in" in output
    login(server)
    local = LocalThreadStore(LoomPaths.from_env())
    store = open_thread_store(LoomPaths.from_env(), background=False)
    thread = thread_with("queued while the session ran")
    store.save(thread)  # queued; no background thread in this test
    store.close()
    code, output = loom("sync", "--json")
    assert code == 0, output
    status = json.loads(output)
    assert status["pushed"] == 1 and status["pending"] == 0 and status["error"] is None
    code, output = loom("sync")
    assert code == 0 and "pending 0" in output
    assert local.load(thread.id) is not None


def test_sync_reports_an_unreachable_server(server) -> None:
    token = server.token()
    loom("login", "--server", server.url, "--token", token)
    creds = LoomPaths.from_env().config / "credentials.json"
    data = json.loads(creds.read_text())
    data["server_url"] = f"http://127.0.0.1:{free_port()}"
    creds.write_text(json.dumps(data))
    store = open_thread_store(LoomPaths.from_env(), background=False)
    store.save(thread_with("stuck"))
    store.close()
    code, output = loom("sync")
    assert code == 1
    assert "pending 1" in output and "cannot reach" in output


def test_share_changes_visibility_on_the_server(server) -> None:
    token = login(server)
    store = open_thread_store(LoomPaths.from_env(), background=False)
    thread = thread_with("look at my fix")
    store.save_and_sync(thread)
    store.close()
    code, output = loom("share", thread.id[:12], "--visibility", "public", "--support", "--json")
    assert code == 0, output
    result = json.loads(output)
    assert result["synced"] and result["share_url"].startswith(server.url + "/shared/")
    import httpx

    opened = httpx.get(result["share_url"])
    assert opened.status_code == 200 and opened.json()["is_shared_with_support"] is True
    info = httpx.get(
        f"{server.url}/api/threads/{thread.id}", headers={"Authorization": f"Bearer {token}"}
    ).json()
    assert info["visibility"] == "public"

    code, output = loom("share", thread.id, "--visibility", "everyone")
    assert code == 1 and "--visibility must be" in output
    private = thread_with("never leaves", is_private=True)
    LocalThreadStore(LoomPaths.from_env()).save(private)
    code, output = loom("share", private.id, "--visibility", "public")
    assert code == 1 and "never leaves this machine" in output


def test_remote_list_and_search(server, capsys) -> None:
    with pytest.raises(typer.Exit):  # not logged in
        remote_list(10, as_json=True)
    assert "not logged in" in capsys.readouterr().err
    login(server)
    store = open_thread_store(LoomPaths.from_env(), background=False)
    thread = thread_with("quixotic refactor of the parser")
    store.save_and_sync(thread)
    store.close()
    capsys.readouterr()
    assert remote_list(50, as_json=True) == 0
    listed = json.loads(capsys.readouterr().out)
    assert thread.id in [t["id"] for t in listed["threads"]]
    assert remote_search("quixotic", 5, as_json=True) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["source"] == "server" and found["hits"][0]["id"] == thread.id
    assert "[quixotic]" in found["hits"][0]["snippet"]


def test_remote_search_falls_back_to_local_when_unreachable(capsys) -> None:
    from loom.store.credentials import Credentials, save_credentials

    paths = LoomPaths.from_env()
    save_credentials(paths, Credentials(f"http://127.0.0.1:{free_port()}", "loom_x"))
    thread = thread_with("quixotic local only")
    LocalThreadStore(paths).save(thread)
    assert remote_search("quixotic", 5, as_json=True) == 0
    captured = capsys.readouterr()
    assert "showing local results" in captured.err
    result = json.loads(captured.out)
    assert result["source"] == "local" and result["hits"][0]["id"] == thread.id


def test_sync_with_a_revoked_token_says_so(server) -> None:
    import asyncio

    from loom.server.db import make_engine, session_factory
    from loom.server.identity import revoke_token

    token = login(server)
    store = open_thread_store(LoomPaths.from_env(), background=False)
    store.save(thread_with("after revoke"))
    store.close()

    async def revoke() -> None:
        engine = make_engine(server.database_url)
        async with session_factory(engine)() as session:
            await revoke_token(session, token)
            await session.commit()
        await engine.dispose()

    asyncio.run(revoke())
    code, output = loom("sync")
    assert code == 1
    assert "loom login" in output and "pending 1" in output
