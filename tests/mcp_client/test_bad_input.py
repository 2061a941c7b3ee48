"""Servers that misbehave or are misconfigured: each is one clear line, the session and
the other servers go on."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import psutil

from tests.support.mcp import bad_server, call


async def test_entry_with_neither_command_nor_url(open_hub, tmp_path: Path) -> None:
    hub, registry, notices = await open_hub({"empty": {}, "ok": bad_server()})
    (notice,) = notices
    assert "'empty'" in notice and "neither command nor url" in notice and "`command`" in notice
    assert "mcp__ok__echo" in registry  # the other server is unaffected
    assert {s.name: s.state for s in hub.statuses()} == {"empty": "invalid", "ok": "ready"}


async def test_command_that_does_not_exist(open_hub) -> None:
    _hub, registry, notices = await open_hub({"gone": {"command": "no-such-program-xyz"}})
    (notice,) = notices
    assert "'gone'" in notice and "cannot run 'no-such-program-xyz'" in notice
    assert "install it or fix `command`" in notice
    assert not [n for n in registry.names() if n.startswith("mcp__")]


async def test_garbage_on_stdout_before_speaking_mcp(open_hub, tmp_path: Path) -> None:
    _hub, registry, notices = await open_hub({"noisy": bad_server("--garbage")})
    assert notices == []
    result = await call(registry, "mcp__noisy__echo", {"text": "hi"}, tmp_path)
    assert result.content == "echo: hi" and not result.is_error


async def test_server_that_never_speaks_mcp_times_out_at_start(open_hub) -> None:
    garbage = {"command": "sh", "args": ["-c", "echo not-json; echo more; sleep 60"]}
    _hub, _registry, notices = await open_hub({"junk": garbage}, startup_timeout=1.5)
    (notice,) = notices
    assert "'junk'" in notice and "did not answer within 1.5 s" in notice
    assert "startup_timeout" in notice


async def test_ten_megabyte_result_is_truncated_with_a_note(open_hub, tmp_path: Path) -> None:
    _hub, registry, _ = await open_hub({"b": bad_server()}, max_result_chars=50_000)
    result = await call(registry, "mcp__b__big", {"megabytes": 10}, tmp_path)
    assert not result.is_error
    assert len(result.content) < 51_000
    assert "[truncated: the result had 10,485,760 characters" in result.content


async def test_names_that_collide(open_hub, tmp_path: Path) -> None:
    _hub, registry, notices = await open_hub({"c": bad_server("--collide")})
    # a server's `file_read` never replaces Loom's built-in
    assert registry.get("file_read").__class__.__name__ == "FileRead"
    mcp_result = await call(registry, "mcp__c__file_read", {"path": "x"}, tmp_path)
    assert mcp_result.content == "mcp file_read x"
    # `a.b` and `a_b` both sanitize to mcp__c__a_b: one is kept, the other reported
    assert "mcp__c__a_b" in registry
    (notice,) = notices
    assert "skipped" in notice and "mcp__c__a_b" in notice


async def test_hanging_call_times_out_and_the_server_goes_on(open_hub, tmp_path: Path) -> None:
    _hub, registry, _ = await open_hub({"h": bad_server(timeout=1.0)})
    result = await call(registry, "mcp__h__hang", {}, tmp_path)
    assert result.is_error and "did not answer within 1 s" in result.content
    again = await call(registry, "mcp__h__echo", {"text": "still here"}, tmp_path)
    assert again.content == "echo: still here"


async def test_killed_server_is_restarted_on_next_use(open_hub, tmp_path: Path) -> None:
    hub, registry, _ = await open_hub({"k": bad_server()})
    first = int((await call(registry, "mcp__k__pid", {}, tmp_path)).content)
    os.kill(first, signal.SIGKILL)
    await _until(lambda: hub.connections["k"].state == "exited")
    second = await call(registry, "mcp__k__pid", {}, tmp_path)
    assert not second.is_error and int(second.content) != first
    assert hub.connections["k"].restarts == 1


async def test_server_dying_mid_call_is_an_error_then_restarts(open_hub, tmp_path: Path) -> None:
    hub, registry, _ = await open_hub({"d": bad_server()})
    died = await call(registry, "mcp__d__die", {}, tmp_path)
    assert died.is_error and "went away during the call" in died.content
    again = await call(registry, "mcp__d__echo", {"text": "back"}, tmp_path)
    assert again.content == "echo: back" and hub.connections["d"].restarts == 1


async def test_servers_stop_with_the_session(open_hub, tmp_path: Path) -> None:
    hub, registry, _ = await open_hub({"s": bad_server()})
    pid = int((await call(registry, "mcp__s__pid", {}, tmp_path)).content)
    assert psutil.pid_exists(pid)
    await hub.aclose()
    assert not _alive(pid)
    result = await call(registry, "mcp__s__echo", {"text": "x"}, tmp_path)
    assert result.is_error and "stopped with its session" in result.content


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


async def _until(condition, attempts: int = 200) -> None:
    import asyncio

    for _ in range(attempts):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("condition never became true")


async def test_mcp_tools_follow_the_permission_policy(open_hub, tmp_path: Path) -> None:
    from loom.permissions import Decision, GrantStore, PermissionPolicy

    _, registry, _ = await open_hub({"b": bad_server()})
    echo, pid = registry.get("mcp__b__echo"), registry.get("mcp__b__pid")
    policy = PermissionPolicy(GrantStore(tmp_path))
    assert policy.decide(echo, {"text": "x"}) is Decision.ASK  # ask by default
    policy.record(echo, {"text": "x"}, "allow_always")
    assert policy.decide(echo, {"text": "other"}) is Decision.ALLOW  # every call of it
    assert policy.decide(pid, {}) is Decision.ASK  # and only that tool
    rules = PermissionPolicy(
        GrantStore(tmp_path / "other"), auto_approve_tools=["mcp__b__*"], deny_rules=["mcp__b__pid"]
    )
    assert rules.decide(echo, {"text": "x"}) is Decision.ALLOW
    assert rules.decide(pid, {}) is Decision.DENY  # deny wins
