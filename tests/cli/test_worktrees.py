"""`loom run --worktree NAME`, `loom --worktree NAME` (the REPL), `loom worktree
list|diff|merge|remove` against the fake LLM server and real git: made on branch loom/NAME from the
current commit, reused, recorded in the thread, and every bad name refused clearly."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.chat_pty import PROMPT, spawn
from tests.support.hostile_text import HOSTILE, assert_text_only
from tests.support.loom_cli import Done

IDENTITY = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e.invalid",
    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e.invalid",
}  # fmt: skip


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **IDENTITY}, check=True)  # fmt: skip
    return done.stdout.strip()


@pytest.fixture
def repo(project: Path) -> Path:
    git(project, "add", "-A")
    git(project, "commit", "-qm", "start")
    return project


def thread_of(stdout: str) -> dict:
    thread_id = json.loads(stdout)["thread_id"]
    path = Path(os.environ["LOOM_HOME"]) / "data" / "threads" / f"{thread_id}.json"
    return json.loads(path.read_text())


def test_run_in_a_worktree_then_reuse_list_and_remove_it(
    cli: Callable[..., Done], server: FakeLlmServer, repo: Path
) -> None:
    marker = repo / ".git" / "hooks" / "ran"
    hook = repo / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    write = {"path": "fix.txt", "content": "fixed\n"}
    server.add(Turn(tool_calls=[FakeToolCall("file_write", write)]), Turn(text="done"))
    done = cli(["run", "--worktree", "fix-login", "-p", "fix it", "--yes", "-o", "json"],
               repo, server)  # fmt: skip
    assert done.returncode == 0, done.stderr
    record = thread_of(done.stdout)["worktree"]
    place = Path(record["path"])
    assert record["name"] == "fix-login" and record["branch"] == "loom/fix-login"
    assert Path(record["repo"]) == repo
    assert (place / "fix.txt").read_text() == "fixed\n" and not (repo / "fix.txt").exists()
    assert (place / "notes.txt").read_text() == "one\n"  # a checkout of the current commit
    assert repo not in place.parents  # never inside the project
    assert git(place, "branch", "--show-current") == "loom/fix-login"
    assert f"loom: working in worktree fix-login (branch loom/fix-login): {place}" in done.stderr
    assert not marker.exists()  # git ran hardened: the repository's hooks did not run

    decide = FakeToolCall("decision_log", {"type": "decision", "title": "Hash with argon2"})
    server.add(Turn(tool_calls=[decide]), Turn(text="still here"))
    again = cli(["run", "-w", "fix-login", "-p", "look", "-o", "json"], repo, server)
    assert again.returncode == 0, again.stderr
    assert thread_of(again.stdout)["worktree"]["path"] == str(place)  # reused, not remade
    # the worktree session's decisions are the project's, not a second project's
    decisions = json.loads(cli(["decisions", "--json"], repo, server).stdout)
    assert [(d["title"], d["workspace_root"]) for d in decisions] == [
        ("Hash with argon2", str(repo))
    ]

    listed = cli(["worktree", "list"], repo, server)
    assert listed.returncode == 0 and "fix-login" in listed.stdout
    assert "loom/fix-login" in listed.stdout and str(place) in listed.stdout
    (place / "scratch.txt").write_text("not committed\n")
    refused = cli(["worktree", "remove", "fix-login"], repo, server)
    assert refused.returncode == 1 and "has uncommitted changes" in refused.stderr
    assert "--force" in refused.stderr and place.is_dir()
    removed = cli(["worktree", "remove", "fix-login", "--force"], repo, server)
    assert removed.returncode == 0, removed.stderr
    assert "branch loom/fix-login kept" in removed.stdout and not place.exists()
    assert git(repo, "branch", "--list", "loom/fix-login")  # the branch stays
    missing = cli(["worktree", "remove", "fix-login"], repo, server)
    assert missing.returncode == 1 and "no Loom worktree 'fix-login'" in missing.stderr


def test_a_runs_work_is_committed_on_its_branch_then_shown_and_merged(
    cli: Callable[..., Done], server: FakeLlmServer, repo: Path
) -> None:
    edit = {"path": "notes.txt", "old_string": "one", "new_string": "one\ntwo"}
    write = {"path": "added.txt", "content": "new\n"}
    server.add(Turn(tool_calls=[FakeToolCall("file_edit", edit)]),
               Turn(tool_calls=[FakeToolCall("file_write", write)]), Turn(text="done"))  # fmt: skip
    done = cli(["run", "-w", "feat", "-p", "extend notes", "--yes"], repo, server)
    assert done.returncode == 0, done.stderr
    assert "loom: committed this run's changes on loom/feat (" in done.stderr
    assert "`loom worktree diff feat` shows them, `loom worktree merge feat` merges them" in (
        done.stderr
    )
    assert git(repo, "show", "loom/feat:added.txt") == "new"  # on the branch, committed
    assert git(repo, "log", "-1", "--format=%s", "loom/feat").startswith("loom: work of thread T-")

    # more work left uncommitted in the worktree: diff shows it, merge commits it first
    listed = json.loads(cli(["worktree", "list", "--json"], repo, server).stdout)
    place = Path(next(w["path"] for w in listed if w["name"] == "feat"))
    (place / "later.txt").write_text("by hand\n")
    shown = cli(["worktree", "diff", "feat"], repo, server)
    assert shown.returncode == 0, shown.stderr
    assert "+two" in shown.stdout and "+++ b/added.txt" in shown.stdout
    assert "new file, not committed yet: later.txt" in shown.stdout
    # a file's escape codes reach the terminal as text, never as codes (issue 34)
    (place / "notes.txt").write_text(f"one\ntwo {HOSTILE}\n")
    hostile = cli(["worktree", "diff", "feat"], repo, server)
    assert_text_only(hostile.stdout)
    (place / "notes.txt").write_text("one\ntwo\n")

    merged = cli(["worktree", "merge", "feat"], repo, server)
    assert merged.returncode == 0, merged.stderr
    assert "Committed the uncommitted work in feat on loom/feat" in merged.stdout
    assert "Merged loom/feat" in merged.stdout
    assert (repo / "notes.txt").read_text() == "one\ntwo\n"
    assert (repo / "added.txt").read_text() == "new\n" and (repo / "later.txt").exists()
    assert git(repo, "status", "--porcelain") == ""
    again = cli(["worktree", "diff", "feat"], repo, server)
    assert again.stdout.strip() == "Worktree feat has no changes."
    assert cli(["worktree", "remove", "feat"], repo, server).returncode == 0
    missing = cli(["worktree", "merge", "nope"], repo, server)
    assert missing.returncode == 1 and "no Loom worktree 'nope'" in missing.stderr


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("bad name", "'bad name' is not a worktree name"),
        ("a..b", "'a..b' is not a worktree name"),
        ("x.lock", "'x.lock' is not a worktree name"),
        ("-rf", "is not a worktree name"),
    ],
)
def test_a_name_that_is_no_branch_name_is_refused(
    cli: Callable[..., Done], server: FakeLlmServer, repo: Path, name: str, message: str
) -> None:
    done = cli(["run", f"--worktree={name}", "-p", "hi"], repo, server)
    assert done.returncode == 2 and message in done.stderr  # a usage error
    assert "letters, digits" in done.stderr and not server.requests


def test_a_taken_name_and_no_repository_are_refused(
    cli: Callable[..., Done], server: FakeLlmServer, repo: Path, tmp_path: Path
) -> None:
    git(repo, "branch", "loom/taken")
    done = cli(["run", "-w", "taken", "-p", "hi"], repo, server)
    assert done.returncode == 1
    assert "a branch loom/taken already exists" in done.stderr
    assert "git branch -D loom/taken" in done.stderr

    plain = tmp_path / "plain"
    plain.mkdir()
    done = cli(["run", "-w", "any", "-p", "hi"], plain, server)
    assert done.returncode == 1 and "is not in a git repository" in done.stderr
    assert "start Loom without --worktree" in done.stderr and not server.requests

    server.add(Turn(text="ok"))
    assert cli(["run", "-w", "blocked", "-p", "hi"], repo, server).returncode == 0
    listed = json.loads(cli(["worktree", "list", "--json"], repo, server).stdout)
    folder = Path(next(w["path"] for w in listed if w["name"] == "blocked"))
    assert cli(["worktree", "remove", "blocked", "--delete-branch"], repo, server).returncode == 0
    folder.mkdir(parents=True)  # a folder where the worktree would go, not a worktree
    done = cli(["run", "-w", "blocked", "-p", "hi"], repo, server)
    assert done.returncode == 1 and f"{folder} exists but is not a worktree of" in done.stderr


def test_the_repl_opens_in_the_worktree(server: FakeLlmServer, repo: Path) -> None:
    server.add(Turn(tool_calls=[FakeToolCall("shell", {"command": "git branch --show-current"})]),
               Turn(text="on the branch"))  # fmt: skip
    child = spawn(["--worktree", "spike", "--yes"], repo, server)
    child.expect(r"worktree spike \(branch loom/spike\): (\S+)")
    assert isinstance(child.match, re.Match)
    place = Path(child.match.group(1))
    child.expect(PROMPT)
    child.sendline("which branch?")
    child.expect("on the branch")
    child.expect(PROMPT)
    child.sendeof()
    child.expect(r"Thread saved: (T-[0-9a-f-]+)")
    assert place.is_dir() and "loom/spike" in json.dumps(server.requests[1].json["messages"])


def test_the_repl_refuses_a_bad_name_as_a_usage_error(server: FakeLlmServer, repo: Path) -> None:
    import pexpect

    child = spawn(["--worktree", "a..b"], repo, server)
    child.expect("'a..b' is not a worktree name")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2 and not server.requests  # as `loom run -w a..b` exits
