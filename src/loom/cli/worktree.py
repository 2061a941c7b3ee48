"""`loom worktree list|diff|merge|remove`: the project's git worktrees Loom made (`loom --worktree
NAME`, `loom run --worktree NAME`, sub-agents with `isolation: worktree`)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from loom.cli._output import person_errors, say

worktree_app = typer.Typer(
    help="The project's Loom worktrees: `loom --worktree NAME` works in one.",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    app.add_typer(worktree_app, name="worktree")


def _api():
    from loom.session import WorktreesApi

    return WorktreesApi.for_folder(Path.cwd())


@worktree_app.command("list")
def list_command(
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of lines."),
) -> None:
    """The project's Loom worktrees: name, branch, folder."""
    with person_errors():
        found = _api().list()
    if as_json:
        rows = [{**w.as_record(), "head": w.head, "missing": w.missing} for w in found]
        typer.echo(json.dumps(rows, indent=2))
        return
    if not found:
        say("No Loom worktrees in this project. Make one with `loom --worktree NAME`.")
        return
    for worktree in found:
        gone = "  (folder gone: `loom worktree remove` cleans up)" if worktree.missing else ""
        say(f"{worktree.name:<20} {worktree.branch:<28} {worktree.path}{gone}")


@worktree_app.command("remove")
def remove_command(
    name: str = typer.Argument(..., help="The worktree's name, as `loom worktree list` shows."),
    force: bool = typer.Option(
        False, "--force", help="Remove it even with uncommitted changes (they are lost)."
    ),
    delete_branch: bool = typer.Option(
        False, "--delete-branch", help="Also delete its branch loom/NAME (commits on it go)."
    ),
) -> None:
    """Remove a Loom worktree's folder; its branch stays unless --delete-branch."""
    with person_errors():
        gone = _api().remove(name, force=force, delete_branch=delete_branch)
    kept = "" if delete_branch else f"; branch {gone.branch} kept (git branch -D to drop it)"
    say(f"Removed worktree {gone.name} ({gone.path}){kept}")


@worktree_app.command("diff")
def diff_command(
    name: str = typer.Argument(..., help="The worktree's name, as `loom worktree list` shows."),
) -> None:
    """What the worktree changed since it left this project's commit (committed or not)."""
    with person_errors():
        patch = _api().diff(name)
    say(patch.rstrip("\n") if patch else f"Worktree {name} has no changes.")


@worktree_app.command("merge")
def merge_command(
    name: str = typer.Argument(..., help="The worktree's name, as `loom worktree list` shows."),
) -> None:
    """Merge the worktree's branch into this project's checked-out branch (its
    uncommitted work is committed on the branch first)."""
    with person_errors():
        worktree, made, said = _api().merge(name)
    if made:
        say(f"Committed the uncommitted work in {name} on {worktree.branch} ({made[:12]}).")
    say(f"Merged {worktree.branch}: {said}")
    say(f"Remove the worktree with `loom worktree remove {name}` when you are done.")
