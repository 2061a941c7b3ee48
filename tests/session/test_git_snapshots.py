"""Git state is snapshotted at start, after every tool that can change the tree, and at stop."""

from __future__ import annotations

import subprocess

from loom.llm.scripted import ScriptedProvider, tool_turn
from loom.store.local import LocalThreadStore
from tests.support.sessions import EchoTool, WriteTool, make_workspace, only


def git(cwd, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def make_repo(path) -> str:
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "t@example.com")
    git(path, "config", "user.name", "T")
    (path / "README").write_text("hi\n")
    git(path, "add", "README")
    git(path, "commit", "-q", "-m", "first")
    return git(path, "rev-parse", "HEAD")


async def test_git_state_follows_the_session(tmp_path) -> None:
    head = make_repo(tmp_path)
    provider = ScriptedProvider(
        [
            tool_turn("echo", {"text": "x"}),
            "read only",
            tool_turn("write_file", {"path": "new.txt", "content": "x"}),
            "wrote",
        ]
    )
    ws = make_workspace(tmp_path, provider, git_snapshot=True)
    session = await ws.start_session(only(EchoTool(), WriteTool(), auto_approve=True))
    thread = session.thread
    assert (thread.git_initial_branch, thread.git_initial_commit_sha) == ("main", head)
    assert thread.git_start_dirty is False and thread.git_commits == [head]

    await session.send_message("read")
    assert thread.git_end_dirty is False
    await session.send_message("write")
    assert thread.git_end_dirty is True  # snapshotted right after the write tool

    (tmp_path / "new.txt").unlink()
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "second")
    second = git(tmp_path, "rev-parse", "HEAD")
    await ws.stop_session(session.id)
    saved = LocalThreadStore().load(thread.id)
    assert saved is not None
    assert saved.git_commits == [head, second]
    assert saved.git_current_commit_sha == second and saved.git_end_dirty is False
    assert saved.git_initial_commit_sha == head
