"""`[hooks] post_tools` after file-changing rounds and `[git] auto_commit` after turns,
through `loom run` against the fake LLM server."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.git import git
from tests.support.loom_cli import loom_in_process

FORMATTER = (
    f"{sys.executable} -c \"import sys; [open(p, 'a').write('# formatted\\\\n') "
    "for p in sys.argv[1:]]; print('formatted', *sys.argv[1:])\" {files}"
)


IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@e.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@e.invalid",
}


def _config(project: Path, text: str) -> None:
    """The project's hooks and auto_commit, trusted (as `loom trust --yes` does)."""
    from loom.config import load_config

    (project / ".loom.toml").write_text(text)
    load_config(project).trust.trust()


def _tool_results(server: FakeLlmServer, index: int) -> str:
    return json.dumps(server.requests[index].json["messages"][-1]["content"])


def test_post_tools_hook_runs_on_changed_files_and_the_model_sees_it(
    server: FakeLlmServer, project: Path
) -> None:
    hooks = json.dumps([FORMATTER, "false"])
    _config(project, f"[hooks]\npost_tools = {hooks}\n")
    server.add(
        Turn(tool_calls=[FakeToolCall("file_write", {"path": "new.py", "content": "x = 1\n"})])
    )
    server.add(Turn(tool_calls=[FakeToolCall("file_read", {"path": "app.py"})]))
    server.add(Turn(text="done"))
    done = loom_in_process(["run", "-p", "add new.py", "--yes"], project, server)
    assert done.returncode == 0, done.stderr
    assert (project / "new.py").read_text() == "x = 1\n# formatted\n"
    seen = _tool_results(server, 1)
    assert "post-tool hooks ran on new.py" in seen and "formatted new.py" in seen
    assert "$ false  (failed" in seen  # a failing command is reported to the model too
    # a round that changed nothing (file_read) runs no hooks
    assert "post-tool hooks" not in _tool_results(server, 2)


def test_post_tools_hook_follows_the_shell_permission_policy(
    server: FakeLlmServer, project: Path
) -> None:
    hooks = json.dumps([FORMATTER])
    _config(
        project, f'[permissions]\nauto_approve = ["file_write"]\n[hooks]\npost_tools = {hooks}\n'
    )
    server.add(Turn(tool_calls=[FakeToolCall("file_write", {"path": "new.py", "content": "y\n"})]))
    server.add(Turn(text="done"))
    done = loom_in_process(["run", "-p", "add new.py"], project, server)  # headless, no --yes
    assert done.returncode == 0, done.stderr
    assert (project / "new.py").read_text() == "y\n"  # the hook did not run
    assert "not run" in _tool_results(server, 1) and "refused shell" in done.stderr


def _write_turn(server: FakeLlmServer) -> None:
    server.add(Turn(tool_calls=[FakeToolCall("file_write", {"path": "app.py", "content": "v2\n"})]))
    server.add(Turn(text="done"))


def test_auto_commit_commits_only_the_turns_files(server: FakeLlmServer, project: Path) -> None:
    _config(project, "[git]\nauto_commit = true\n")
    git(project, "add", ".loom.toml")
    git(project, "-c", "user.name=t", "-c", "user.email=t@e.invalid", "commit", "-qm", "cfg")
    (project / "notes.txt").write_text("my own unfinished work\n")
    _write_turn(server)
    done = loom_in_process(
        ["run", "-p", "Bump app to v2\nwith detail", "--yes", "-o", "json"],
        project,
        server,
        **IDENTITY,
    )
    assert done.returncode == 0, done.stderr
    assert git(project, "log", "-1", "--format=%s").strip() == "loom: Bump app to v2"
    assert git(project, "show", "--name-only", "--format=", "HEAD").split() == ["app.py"]
    assert "notes.txt" in git(project, "status", "--porcelain")  # not the agent's: left alone
    head = git(project, "rev-parse", "HEAD").strip()
    thread_id = json.loads(done.stdout)["thread_id"]
    import os

    saved = Path(os.environ["LOOM_HOME"]) / "data" / "threads" / f"{thread_id}.json"
    assert head in json.loads(saved.read_text())["git_commits"]


def test_auto_commit_says_so_on_a_detached_head(server: FakeLlmServer, project: Path) -> None:
    _config(project, "[git]\nauto_commit = true\n")
    git(project, "checkout", "-q", "--detach")
    before = git(project, "rev-parse", "HEAD")
    _write_turn(server)
    done = loom_in_process(["run", "-p", "bump", "--yes", "-o", "stream-json"], project, server)
    assert done.returncode == 0, done.stderr
    assert git(project, "rev-parse", "HEAD") == before
    assert "HEAD is detached" in done.stdout


def test_auto_commit_runs_no_hook_or_configured_program(
    server: FakeLlmServer, project: Path, tmp_path: Path
) -> None:
    """auto_commit is Loom's own git: a hook or an fsmonitor would run code the agent
    may have written (a hook calling the project's scripts) outside the sandbox."""
    _config(project, "[git]\nauto_commit = true\n")
    mark = tmp_path / "home" / "ran"
    mark.parent.mkdir()
    hook = project / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\ntouch {mark}.hook\nexit 1\n")
    hook.chmod(0o755)
    git(project, "config", "core.fsmonitor", f"touch {mark}.fsmonitor; false")
    before = git(project, "rev-parse", "HEAD")
    _write_turn(server)
    done = loom_in_process(
        ["run", "-p", "bump", "--yes", "-o", "stream-json"],
        project,
        server,
        **IDENTITY,
    )
    assert done.returncode == 0, done.stderr
    git(project, "config", "--unset", "core.fsmonitor")
    assert git(project, "rev-parse", "HEAD") != before  # committed, with no hook run
    assert list(mark.parent.iterdir()) == []
