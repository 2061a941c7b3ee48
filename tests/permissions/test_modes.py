"""Permission modes in the decision (loom.permissions.modes): plan, acceptEdits,
bypassPermissions, and switching at run time."""

from __future__ import annotations

import pytest

from loom.core.permission_modes import next_permission_mode, parse_permission_mode
from loom.permissions import Decision, PermissionPolicy
from loom.permissions.modes import PLAN_REFUSAL
from loom.permissions.read_only import read_only_command
from tests.support.permissions import GIT, READ, SHELL, WRITE, StubTool


def sh(command: str) -> dict[str, str]:
    return {"command": command}


def test_plan_refuses_changes_with_a_note_and_lets_reads_through(
    policy: PermissionPolicy,
) -> None:
    policy.set_mode("plan")
    for tool, args in [(WRITE, {"path": "a.py"}), (SHELL, sh("touch x")), (GIT, {})]:
        verdict = policy.check(tool, args)
        assert verdict.decision is Decision.DENY and verdict.reason == PLAN_REFUSAL
    assert policy.decide(READ, {"path": "a.py"}) is Decision.ALLOW
    # a read-only command is not refused by plan mode: the usual rules ask about it
    assert policy.check(SHELL, sh("ls -la && git log -3")).decision is Decision.ASK
    policy.record(SHELL, sh("git status"), "allow_always")
    assert policy.decide(SHELL, sh("git status")) is Decision.ALLOW


def test_plan_refuses_even_what_a_grant_or_bypass_would_allow(policy: PermissionPolicy) -> None:
    policy.record(WRITE, {"path": "a.py"}, "allow_always")
    policy.set_mode("plan")
    assert policy.decide(WRITE, {"path": "a.py"}) is Decision.DENY
    policy.set_mode("default")
    assert policy.decide(WRITE, {"path": "a.py"}) is Decision.ALLOW


@pytest.mark.parametrize(
    "command",
    [
        "sed -i s/a/b/ x", "find . -delete", "find . -exec rm {} +", "rg --pre ./x foo",
        "git diff --output=x", "git -c core.pager=x log", "ls > out.txt", "cat $(echo x)",
        "./script.sh", "env X=1 rm -r y", "sort -o out x", "python -c 'print(1)'",
        "npm test", "ls & touch y",
    ],
)  # fmt: skip
def test_commands_that_may_change_things_are_not_read_only(command: str) -> None:
    assert not read_only_command(command)


@pytest.mark.parametrize(
    "command", ["ls -la", "git status", "grep -rn foo src | head -5", "cat a 2>/dev/null", "rg x"]
)
def test_plain_reads_are_read_only(command: str) -> None:
    assert read_only_command(command)


def test_accept_edits_runs_edits_inside_the_project_and_commands_still_ask(
    policy: PermissionPolicy,
) -> None:
    policy.set_mode("acceptEdits")
    assert policy.decide(WRITE, {"path": "src/a.py"}) is Decision.ALLOW
    assert policy.decide(StubTool("file_edit", "write", "path"), {"path": "a.py"}) is (
        Decision.ALLOW
    )
    assert policy.decide(WRITE, {"path": "../elsewhere.py"}) is Decision.ASK
    assert policy.decide(WRITE, {"path": "/etc/passwd"}) is Decision.ASK
    assert policy.decide(SHELL, sh("pytest")) is Decision.ASK
    assert policy.decide(GIT, {}) is Decision.ASK


def test_bypass_is_auto_approve_all_and_the_floor_still_asks(policy: PermissionPolicy) -> None:
    policy.set_mode("bypassPermissions")
    assert policy.auto_approve_all
    assert policy.decide(SHELL, sh("pytest")) is Decision.ALLOW
    assert policy.decide(SHELL, sh("rm -rf /")) is Decision.ASK


def test_names_and_the_cycle() -> None:
    assert parse_permission_mode("acceptedits") == "acceptEdits"
    with pytest.raises(ValueError, match="default, acceptEdits, plan, bypassPermissions"):
        parse_permission_mode("yolo")
    assert [next_permission_mode(m) for m in ("default", "acceptEdits", "plan")] == [
        "acceptEdits",
        "plan",
        "default",
    ]
    assert next_permission_mode("bypassPermissions") == "default"  # never reached by a key
