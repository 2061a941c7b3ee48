from __future__ import annotations

from pathlib import Path

import pytest

from loom.tools.base import ToolError
from tests.support.git import git, make_repo
from tests.support.tools import Runner


@pytest.fixture
def repo(root: Path) -> Path:
    return make_repo(root)


async def test_status_add_commit_log_diff(run: Runner, repo: Path) -> None:
    assert "nothing to commit" in (await run("git", subcommand="status")).content
    (repo / "a.txt").write_text("two\n")
    (repo / "b.txt").write_text("new\n")
    diff = await run("git", subcommand="diff")
    assert "-one" in diff.content and "+two" in diff.content
    await run("git", subcommand="add", args=["a.txt", "b.txt"])
    committed = await run("git", subcommand="commit", args=["-m", "Second change"])
    assert "Second change" in committed.content
    log = await run("git", subcommand="log", args=["--oneline"])
    assert [line.split(" ", 1)[1] for line in log.content.splitlines()] == [
        "Second change",
        "first",
    ]
    shown = await run("git", subcommand="show", args=["--stat", "HEAD"])
    assert "b.txt" in shown.content
    assert git(repo, "status", "--porcelain") == ""


async def test_stash_push_list_pop(run: Runner, repo: Path) -> None:
    (repo / "a.txt").write_text("dirty\n")
    await run("git", subcommand="stash", args=["push", "-m", "wip"])
    assert (repo / "a.txt").read_text() == "one\n"
    assert "wip" in (await run("git", subcommand="stash", args=["list"])).content
    await run("git", subcommand="stash", args=["pop"])
    assert (repo / "a.txt").read_text() == "dirty\n"


async def test_branch_listing_only(run: Runner, repo: Path) -> None:
    git(repo, "branch", "feature")
    listed = await run("git", subcommand="branch", args=["-v"])
    assert "feature" in listed.content and "* main" in listed.content
    current = await run("git", subcommand="branch", args=["--show-current"])
    assert current.content == "main"
    for args in (["new-branch"], ["-D", "feature"], ["-m", "feature", "x"]):
        with pytest.raises(ToolError, match="only lists branches"):
            await run("git", subcommand="branch", args=args)
    assert "feature" in git(repo, "branch")


@pytest.mark.parametrize(
    ("subcommand", "args", "message"),
    [
        ("reset", ["--hard"], "git reset is refused"),
        ("clean", ["-fd"], "git clean is refused: it deletes untracked files"),
        ("push", ["--force"], "git push is refused"),
        ("checkout", ["--", "."], "git checkout is refused"),
        ("stash", ["drop"], "git stash drop is refused"),
        ("stash", ["clear"], "git stash clear is refused"),
        ("commit", [], "needs a message"),
        ("add", ["../outside.txt"], "outside the project"),
        ("diff", ["--no-index", "/etc/hostname", "a.txt"], "option .--no-index. is not allowed"),
        ("log", ["--output=/tmp/x"], "option .--output=/tmp/x. is not allowed"),
    ],
)
async def test_destructive_and_unsafe_calls_are_refused(
    run: Runner, repo: Path, subcommand: str, args: list[str], message: str
) -> None:
    (repo / "a.txt").write_text("uncommitted work\n")
    with pytest.raises(ToolError, match=message):
        await run("git", subcommand=subcommand, args=args)
    assert (repo / "a.txt").read_text() == "uncommitted work\n"


async def test_git_errors_are_explained(run: Runner, root: Path) -> None:
    with pytest.raises(ToolError, match="not a git repository"):
        await run("git", subcommand="status")
