"""Shell commands judged on bash's own grammar (issue 16, items 4 and 5).

Class 4: a saved prefix grant covers a command only when the parse shows literal simple
commands; each bypass below is checked against the rules, and the property test runs
every command the rules accept in a real bash with a stub `git`, proving bash runs
nothing else.
Class 5: the dangerous floor under --yes sees through indirect command words and globs.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest
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

GRANT = ["git status"]

# Each must go back to the person although a `git status` grant exists.
BYPASSES = [
    "git status $'\\'' ; touch M ; #'",  # ANSI-C quoting: shlex sees one word, bash two commands
    "git status $'\\' ; touch M ; #'",
    "git status $'a\\x3b' ; touch M",
    'git status $"x" ; touch M',
    "git status ${x:-$(touch M)}",
    "git status ${x:=`touch M`}",
    "git status ${x/$(touch M)/y}",
    "git status ${!x}",
    "git status ${IFS}; touch M",
    "git status $x",
    'git status "$x"',
    "git status $(touch M)",
    'git status "$(touch M)"',
    "git status `touch M`",
    'git status "`touch M`"',
    "git status <(touch M)",
    "git status >(touch M)",
    "git status $((x[$(touch M)]))",
    "git status > M",
    "git status >> M",
    "git status 2> M",
    "git status &> M",
    "git status >| M",
    "git status 2>&1 >M",
    "git status >& M",
    "git status < /etc/passwd",
    "git status <<< $(touch M)",
    "git status <<EOF\n$(touch M)\nEOF\n",
    "git status & touch M",
    "git status &",
    "git status; touch M",
    "git status && touch M",
    "git status || touch M",
    "git status | touch M",
    "git status |& touch M",
    "git status\ntouch M",
    "git status\r\ntouch M",
    "PATH=. git status",
    "GIT_DIR=/tmp git status",
    "x=1; git status",
    "git status *",
    "git status ?",
    "git status [a]",
    "git status ~",
    "git status ~root",
    "git status {a,b}",
    "(git status)",
    "{ git status; }",
    "git status # comment",
    "eval git status",
    "git status 'unterminated",
    'git status "unterminated',
    "git status \\",
    "if git status; then touch M; fi",
    "f() { touch M; }; git status",
    "git status $(: )",
    "git status-x",
    "gits status",
    "git",
]
COVERED = [
    "git status",
    "git  status",
    "git status -s",
    "git status --short -- src/a.py",
    "git status 'a b'",
    'git status "x"',
    "git statu\\s",
    "git status 2>&1",
    "git status >/dev/null",
    "git status 2>/dev/null",
    "git status a#b",
]


@pytest.mark.parametrize("command", BYPASSES)
def test_a_prefix_grant_does_not_cover(command: str) -> None:
    assert not covered_by_prefixes(command, GRANT)


@pytest.mark.parametrize("command", COVERED)
def test_a_prefix_grant_covers_plain_calls(command: str) -> None:
    assert covered_by_prefixes(command, GRANT)


def test_the_issue_example_through_the_policy(tmp_path: Path) -> None:
    policy = PermissionPolicy(GrantStore(tmp_path))
    policy.record(SHELL, {"command": "git status"}, "allow_always")
    assert policy.decide(SHELL, {"command": "git status -s"}) is Decision.ALLOW
    for command in BYPASSES[:12]:
        assert policy.decide(SHELL, {"command": command}) is Decision.ASK, command


def test_no_prefix_is_offered_for_non_literal_commands() -> None:
    assert command_prefix("git status $'\\'' ; touch M ; #'") is None
    assert command_prefix("$x status") is None
    assert command_prefix("git status") == "git status"


# -- the property: whatever the rules accept, bash runs only the granted command ---------

PIECES = st.sampled_from(
    [
        " ", "a", "-s", "'", '"', "\\", "$", "'\\''", "$'\\''", "$'", "${x:-", "}", "$(",
        ")", "`", ";", "&", "|", "&&", "\n", "#", ">", "<", "2>&1", ">M", "/dev/null",
        "touch M", "*", "~", "{a,b}", "=", "x=1", "$x", "!", "(", "\t", "$\"", "\\n",
    ]
)  # fmt: skip


def _stub_path(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    stub = bin_dir / "git"
    stub.write_text('#!/bin/sh\nprintf "%s\\n" "$1" >> "$LOG"\n')
    stub.chmod(stub.stat().st_mode | stat.S_IEXEC)
    return bin_dir


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(PIECES, max_size=8).map("".join))
def test_what_a_grant_covers_runs_nothing_else_in_bash(tmp_path: Path, tail: str) -> None:
    command = "git status " + tail
    if not covered_by_prefixes(command, GRANT):
        return
    bin_dir = _stub_path(tmp_path)
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    log = tmp_path / "calls.log"
    log.unlink(missing_ok=True)
    env = {"PATH": str(bin_dir), "LOG": str(log), "HOME": str(tmp_path)}
    subprocess.run(
        ["/bin/bash", "-c", command], cwd=work, env=env, capture_output=True, check=False
    )
    assert os.listdir(work) == [], f"{command!r} wrote files"
    assert log.read_text().splitlines() == ["status"], f"{command!r} ran something else"


# -- class 5: the floor ------------------------------------------------------------------

FLOOR = [
    "rm -rf /ho*",
    "x=rm; $x -rf /",
    "$x -rf /",
    '"$(echo rm)" -rf /',
    "`echo rm` -rf /",
    "${RM:-rm} -rf /",
    "$'\\x72m' -rf /",
    "r''m -rf /",
    "\\rm -rf /",
    '"rm" -rf "/"',
    "rm -r -f /",
    "rm -rf /*",
    "rm -rf /h?me",
    "rm -rf /[h]ome",
    "rm -rf /ho{me,}",
    "rm -rf ~",
    "rm -rf ~/",
    "rm -rf $HOME",
    'rm -rf "$HOME"/',
    "rm -rf ${HOME}",
    "rm -rf ../*",
    "rm -rf $(pwd)/..",
    "a=/; rm -rf $a",
    "rm -rf -- /",
    "rm -rf >/dev/null /",
    "rm -fr /usr",
    "command rm -rf /",
    "sudo $x -rf /",
    "env $x -rf /",
    "find / | xargs rm -rf",
    "chmod -R 777 /e*",
    "chown -R me $DIR",
    "shred -u $FILE",
    "bash -c 'rm -rf /'",
    'bash -c "$x"',
    'eval "$x"',
    "sh -c 'x=rm; $x -rf /'",
    "echo ok && $(echo rm) -rf /",
    "(cd / && rm -rf *)",
    "for d in /*; do rm -rf $d; done",
    "echo 'unterminated",
]
NOT_FLOOR = [
    "rm *.pyc",
    "rm -rf build/",
    "rm -rf build/*",
    "rm -f a.txt",
    "git status",
    "pytest -x",
    "ls $HOME",
    "echo $PATH",
    "python -m pytest 2>&1 | tail -n 5",
    "cat <<EOF\nhi\nEOF\n",
    "find . -name '*.pyc' -delete",
    "for f in *.py; do wc -l $f; done",
]


@pytest.mark.parametrize("command", FLOOR)
def test_the_floor_sees_through_indirection(tmp_path: Path, command: str) -> None:
    assert dangerous_reason(command), command
    store = GrantStore(tmp_path)
    store.add("shell", "any", "*")
    policy = PermissionPolicy(store, auto_approve_all=True, dangerous="deny")
    verdict = policy.check(SHELL, {"command": command})
    assert verdict.decision is Decision.DENY and "dangerous" in verdict.reason


@pytest.mark.parametrize("command", NOT_FLOOR)
def test_everyday_commands_are_not_on_the_floor(command: str) -> None:
    assert dangerous_reason(command) is None


WIPE_WORDS = st.sampled_from(
    ["rm", "\\rm", "'rm'", '"rm"', "r''m", 'r""m', "/bin/rm", "command rm", "sudo rm",
     "env rm", "$'rm'", "$RM", "${RM:-rm}", '"$(echo rm)"', "`echo rm`", "x=rm; $x"]
)  # fmt: skip
WIPE_FLAGS = st.sampled_from(["-rf", "-fr", "-r -f", "-R -f", "--recursive --force", "-rf --"])
WIPE_TARGETS = st.sampled_from(
    ["/", "/*", "~", "~/", "$HOME", "${HOME}", "/ho*", "/h?me", '"/"', "'/'", "/usr",
     "../*", "$(pwd)/..", "$DIR", "/[eh]*", "/ho{me,}", "*"]
)  # fmt: skip
JOINED = st.sampled_from(["", "true; ", "cd /tmp && ", "echo ok | ", "(", "{ "])


@settings(max_examples=400, deadline=None)
@given(word=WIPE_WORDS, flags=WIPE_FLAGS, target=WIPE_TARGETS, before=JOINED)
def test_no_spelling_of_a_wipe_gets_past_the_floor(
    word: str, flags: str, target: str, before: str
) -> None:
    closing = {"(": ")", "{ ": "; }"}.get(before, "")
    command = f"{before}{word} {flags} {target}{closing}"
    assert dangerous_reason(command), command


def test_the_issue_examples_are_refused_through_loom_run_with_yes(tmp_path: Path) -> None:
    from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
    from tests.support.loom_cli import loom_in_process

    project = tmp_path / "proj"
    project.mkdir()
    (project / "keep.txt").write_text("keep\n")
    calls = [FakeToolCall("shell", {"command": c}) for c in ("rm -rf /ho*", "x=rm; $x -rf .")]
    with FakeLlmServer() as server:
        server.add(Turn(tool_calls=calls), Turn(text="stopped"))
        done = loom_in_process(["run", "-p", "clean up", "--yes"], project, server)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("refused shell") == 2 and "dangerous" in done.stderr
    assert (project / "keep.txt").exists()
