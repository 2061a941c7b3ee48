"""REPL `/diff` after resuming a thread whose file says its starting commit is a git
option (issue 20, route 3): the resume refuses the quarantined file, nothing is written."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pexpect
from tests.fakes.llm_server import FakeLlmServer
from tests.support.chat_pty import PROMPT, spawn
from tests.support.threads import plant_thread


def test_resume_then_diff_never_hands_the_value_to_git(
    server: FakeLlmServer, project: Path, tmp_path: Path, loom_home: Path
) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    subprocess.run(["git", "-C", str(project), "add", "."], check=True)
    subprocess.run(["git", "-C", str(project), "-c", "user.email=a@b", "-c", "user.name=a",
                    "commit", "-qm", "start"], check=True)  # fmt: skip
    outside = tmp_path / "outside"
    outside.mkdir()
    marker = outside / "bashrc"
    thread_id = plant_thread(
        git_initial_commit_sha=f"--output={marker}", workspace_root=str(project)
    )
    child = spawn(["resume", thread_id], project, server)
    # Before the check, the thread resumed and `/diff` was one keystroke away.
    index = child.expect(["is not a commit id", PROMPT])
    if index == 1:
        child.sendline("/diff")
        child.expect(PROMPT)
        child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert index == 0 and child.exitstatus != 0
    assert not marker.exists()
    assert (loom_home / "data" / "quarantine" / f"{thread_id}.json").exists()
