"""A thread is governed by its own project (issue 34, item 7). A thread made in
project A and resumed from folder B, which the person trusted: B's SessionStart hook,
B's `auto_approve` and B's instructions must not govern a session working in A. Every
resuming face of the terminal opens A's settings and trust; a folder that is gone is
refused in one line saying so."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.git import init_repo
from tests.support.loom_cli import Done
from tests.support.wire import system_of


def folder_b(tmp_path: Path, cli: Callable[..., Done], server: FakeLlmServer) -> Path:
    """Project B: trusted by the person, with a SessionStart hook that leaves a marker,
    `auto_approve = ["shell"]` and a LOOM.md of its own."""
    b = init_repo(tmp_path / "b", {"LOOM.md": "B-ONLY-INSTRUCTIONS\n"})
    marker = tmp_path / "B_HOOK_RAN"
    (b / ".loom.toml").write_text(
        '[permissions]\nauto_approve = ["shell"]\n'
        f'[[hooks.SessionStart]]\ncommand = "echo ran >> {marker}"\n'
    )
    trusted = cli(["trust", "--yes"], b, server)
    assert trusted.returncode == 0 and "Trusted" in trusted.stdout, trusted.stderr
    return b


def thread_in(project: Path, cli: Callable[..., Done], server: FakeLlmServer) -> str:
    server.add(Turn(text="hello from A"))
    done = cli(["run", "-p", "start in A", "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["thread_id"]


SHELL_IN_A = FakeToolCall("shell", {"command": "touch SHELL_RAN_UNASKED"})


@pytest.mark.parametrize(
    "command",
    [["run", "-p", "go on", "--resume"], ["resume", "-p", "go on"]],
    ids=["run --resume", "resume -p"],
)
def test_a_thread_resumed_from_a_trusted_folder_keeps_its_own_projects_settings(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path, tmp_path: Path,
    command: list[str],
) -> None:  # fmt: skip
    thread_id = thread_in(project, cli, server)
    b = folder_b(tmp_path, cli, server)
    server.add(Turn(tool_calls=[SHELL_IN_A]), Turn(text="carried on"))
    args = [*command, thread_id] if command[0] == "run" else ["resume", thread_id, "-p", "go on"]
    done = cli(args, b, server)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "B_HOOK_RAN").exists()  # B's hook never ran for A's thread
    assert not (project / "SHELL_RAN_UNASKED").exists()  # B's auto_approve did not apply
    assert "B-ONLY-INSTRUCTIONS" not in system_of(server.requests[-2])
    assert "shell" in done.stderr and "refused" in done.stderr  # headless: A asks, nobody can

    server.add(Turn(text="in B"))  # B's own threads still get B's settings
    assert cli(["run", "-p", "hi"], b, server).returncode == 0
    assert (tmp_path / "B_HOOK_RAN").read_text() == "ran\n"


def test_a_thread_whose_folder_is_gone_is_refused_in_one_line(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path, tmp_path: Path
) -> None:
    thread_id = thread_in(project, cli, server)
    b = folder_b(tmp_path, cli, server)
    shutil.rmtree(project)
    asked = len(server.requests)
    done = cli(["run", "-p", "go on", "--resume", thread_id], b, server)
    assert done.returncode == 1
    assert done.stderr == (
        f"loom: error: thread {thread_id} works in {project}, which no longer exists; put "
        f"that folder back to continue it there (`loom show {thread_id}` reads it anywhere)\n"
    )
    assert not (tmp_path / "B_HOOK_RAN").exists() and len(server.requests) == asked


def test_the_repl_resumes_a_thread_under_its_own_projects_settings(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path, tmp_path: Path
) -> None:
    """`loom resume ID` in a terminal, from B: the REPL's session is A's."""
    import pexpect
    from tests.support.chat_pty import PROMPT, spawn

    thread_id = thread_in(project, cli, server)
    b = folder_b(tmp_path, cli, server)
    server.add(Turn(text="answered in the REPL"))
    child = spawn(["resume", thread_id], b, server)
    child.expect(PROMPT)
    child.sendline("carry on")
    child.expect("answered in the REPL")
    child.expect(PROMPT)
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert not (tmp_path / "B_HOOK_RAN").exists()  # B's hook never ran for A's thread
    assert "B-ONLY-INSTRUCTIONS" not in system_of(server.requests[-1])


def test_the_repl_asks_the_threads_project_its_trust_question(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path, tmp_path: Path
) -> None:
    """Resumed from B (trusted, asks nothing), A's thread is A's: A's settings are what
    the person is asked to trust before the prompt, and "no" keeps them out."""
    import pexpect
    from tests.support.chat_pty import PROMPT, spawn

    thread_id = thread_in(project, cli, server)
    (project / ".loom.toml").write_text('[permissions]\nauto_approve = ["shell"]\n')
    b = folder_b(tmp_path, cli, server)
    child = spawn(["resume", thread_id], b, server)
    index = child.expect([r"Trust this project\? \[y/N\]", PROMPT])
    assert index == 0, "no trust question: the folder's settings were used"
    assert child.before is not None
    assert "permissions.auto_approve: these tools run without asking: shell" in child.before
    child.send("n")  # one key answers
    child.expect(PROMPT)
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert not (tmp_path / "B_HOOK_RAN").exists()
