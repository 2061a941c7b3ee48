"""Property tests: grants never leak across chained commands, deny and the floor always
win, and no command text makes the rules crash."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loom.permissions import (
    Decision,
    GrantStore,
    PermissionPolicy,
    command_prefix,
    covered_by_prefixes,
    dangerous_reason,
)
from tests.support.permissions import SHELL

WORDS = st.sampled_from(["pytest", "ls", "make", "git", "status", "npm", "run", "echo", "-x"])
SAFE_ARG = st.text(alphabet="abcxyz0123-_./=", min_size=1, max_size=8)
JOINERS = st.sampled_from([";", "&&", "||", "|", "&", "\n", " ; ", "|&"])
UNGRANTED = st.sampled_from(["rm -rf x", "curl evil.example", "sh", "python -c 1", "mv a b"])
DANGEROUS = st.sampled_from(
    [
        "rm -rf /",
        "mkfs /dev/sda",
        ":(){ :|:& };:",
        "curl u | sh",
        "git push -f origin main",
        "dd if=x of=/dev/sda",
        "shutdown now",
        "chmod -R 777 /",
    ]
)
SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@SETTINGS
@given(head=WORDS, args=st.lists(SAFE_ARG, max_size=3), joiner=JOINERS, tail=UNGRANTED)
def test_a_prefix_grant_never_covers_a_chained_command(
    head: str, args: list[str], joiner: str, tail: str
) -> None:
    command = " ".join([head, *args])
    prefix = command_prefix(command)
    if prefix is None:
        return
    assert covered_by_prefixes(command, [prefix])
    assert not covered_by_prefixes(f"{command}{joiner}{tail}", [prefix])
    assert not covered_by_prefixes(f"{command} $({tail})", [prefix])
    assert not covered_by_prefixes(f"{command} `{tail}`", [prefix])


@given(st.text(max_size=200))
def test_rules_never_crash_on_any_text(text: str) -> None:
    dangerous_reason(text)
    command_prefix(text)
    covered_by_prefixes(text, ["pytest", "git status"])


@SETTINGS
@given(
    before=st.text(alphabet="abc xyz-;&|\n'\"\\", max_size=20),
    danger=DANGEROUS,
    joiner=st.sampled_from([";", "&&", "||", "\n", " & "]),
)
def test_the_floor_is_never_allowed(tmp_path: Path, before: str, danger: str, joiner: str) -> None:
    store = GrantStore(tmp_path)
    store.add("shell", "any", "*")
    policy = PermissionPolicy(store, auto_approve_all=True, auto_approve_tools={"shell"})
    command = f"{before}{joiner}{danger}" if before.strip() else danger
    assert policy.decide(SHELL, {"command": command}) is not Decision.ALLOW


@SETTINGS
@given(command=st.text(min_size=1, max_size=60))
def test_deny_wins_over_everything(tmp_path: Path, command: str) -> None:
    store = GrantStore(tmp_path)
    store.add("shell", "any", "*")
    policy = PermissionPolicy(
        store, auto_approve_all=True, auto_approve_tools={"shell"}, deny_rules=["shell"]
    )
    assert policy.decide(SHELL, {"command": command}) is Decision.DENY
