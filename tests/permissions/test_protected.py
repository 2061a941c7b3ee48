"""Writes that change what git or Loom runs always ask (issue 16, item 3).

The real file tools and the real policy, whatever is auto-approved or granted; and end
to end, the issue's attack through `loom run` with the README's auto-approvals: write
`.git/config` with `core.fsmonitor`, then `git status`.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from loom.permissions import Decision, GrantStore, PermissionPolicy
from loom.tools.file_write import FileEdit, FileWrite
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.loom_cli import loom_in_process
from tests.support.permissions import SHELL

PROTECTED = [
    (".git/config", ".git/"),
    (".git/hooks/pre-commit", ".git/"),
    (".git/info/attributes", ".git/"),
    ("./.git/../.git/config", ".git/"),
    (".GIT/config", ".git/"),
    ("vendor/lib/.git/config", ".git/"),
    ("vendor/lib/.git", ".git/"),
    (".git/modules/lib/config", ".git/"),
    (".loom.toml", "Loom's project configuration"),
    ("sub/.loom.toml", "Loom's project configuration"),
    (".mcp.json", "MCP servers"),
    (".gitattributes", "filter and diff programs"),
    ("docs/.gitattributes", "filter and diff programs"),
    (".gitmodules", "submodules"),
    (".husky/_/pre-commit", "core.hooksPath"),
    ("ABSOLUTE/.git/config", ".git/"),
    ("config-link", ".git/"),  # a symlink into .git/
    ("hooks-link/post-checkout", ".git/"),  # a folder symlink into .git/
]
ORDINARY = ["src/app.py", "LOOM.md", ".gitignore", "README.md", "git/config", ".github/x.yml"]


@pytest.fixture
def repo(project: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    subprocess.run(["git", "config", "core.hooksPath", ".husky/_"], cwd=project, check=True)
    os.symlink(project / ".git" / "config", project / "config-link")
    os.symlink(project / ".git" / "hooks", project / "hooks-link")
    return project


def _policies(repo: Path) -> list[PermissionPolicy]:
    store = GrantStore(repo)
    for tool in ("file_write", "file_edit"):
        store.add(tool, "any", "*")
        store.add(tool, "dir", ".git/")
    return [
        PermissionPolicy(store, auto_approve_tools={"file_write", "file_edit"}),
        PermissionPolicy(store, auto_approve_all=True),
        PermissionPolicy(store),  # only the saved grants
    ]


@pytest.mark.parametrize(("path", "why"), PROTECTED)
def test_protected_writes_always_ask_with_the_reason(repo: Path, path: str, why: str) -> None:
    path = path.replace("ABSOLUTE", str(repo))
    for tool in (FileWrite(repo), FileEdit(repo)):
        for policy in _policies(repo):
            args = {"path": path, "content": "x", "old_string": "a", "new_string": "b"}
            verdict = policy.check(tool, args)
            assert verdict.decision is Decision.ASK, (tool.name, path)
            assert why in verdict.reason and "always asks" in verdict.reason
            assert policy.record(tool, args, "allow_always") is None  # nothing saved


@pytest.mark.parametrize("path", ORDINARY)
def test_ordinary_writes_follow_the_usual_rules(repo: Path, path: str) -> None:
    policy = PermissionPolicy(GrantStore(repo), auto_approve_tools={"file_write"})
    assert policy.decide(FileWrite(repo), {"path": path, "content": "x"}) is Decision.ALLOW


def test_a_shell_grant_never_covers_naming_a_protected_file(repo: Path) -> None:
    policy = PermissionPolicy(GrantStore(repo))
    policy.record(SHELL, {"command": "cp a b"}, "allow_always")
    assert policy.decide(SHELL, {"command": "cp a b"}) is Decision.ALLOW
    for target in (".git/config", ".git/hooks/pre-commit", ".loom.toml", "x/.gitattributes"):
        assert policy.decide(SHELL, {"command": f"cp evil {target}"}) is Decision.ASK


async def test_a_write_reaching_git_through_a_swapped_link_is_refused(repo: Path) -> None:
    """The question named `notes.txt`; if it became a link into .git/ since, the tool
    refuses rather than write there."""
    from loom.tools.base import ToolContext, ToolError

    ctx = ToolContext(repo)
    os.symlink(repo / ".git" / "description", repo / "notes.txt")
    with pytest.raises(ToolError, match="through a symlink"):
        await FileWrite(repo).run({"path": "notes.txt", "content": "pwned"}, ctx)
    assert "pwned" not in (repo / ".git" / "description").read_text()


def test_the_issue_attack_through_loom_run(project: Path, tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".loom.toml").write_text(
        '[permissions]\nauto_approve = ["file_write", "file_edit"]\n'
    )
    mark = tmp_path / "PWNED"
    hostile = (project / ".git" / "config").read_text() + (
        f"[core]\n\tfsmonitor = touch {mark}; false\n"
    )
    with FakeLlmServer() as server:
        server.add(
            Turn(
                tool_calls=[
                    FakeToolCall("file_write", {"path": ".git/config", "content": hostile}),
                    FakeToolCall("file_write", {"path": "notes.txt", "content": "fine\n"}),
                    FakeToolCall("git", {"subcommand": "status"}),
                ]
            )
        )
        server.add(Turn(text="done"))
        # auto_approve applies
        done = loom_in_process(["run", "-p", "go", "--trust"], project, server)
        assert done.returncode == 0, done.stderr
        assert "refused file_write" in done.stderr and ".git/" in done.stderr
        results = [m for m in server.requests[1].json["messages"] if m["role"] == "user"][-1]
        text = str(results)
        assert "always asks" in text
    assert "fsmonitor" not in (project / ".git" / "config").read_text()
    assert (project / "notes.txt").read_text() == "fine\n"  # the ordinary write went through
    assert not mark.exists()
