"""`loom undo`, `loom redo` and `loom checkpoints gc`: taking back what the agent did to
the project's files, from the shell (the REPL has /undo, /redo and /rewind)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from loom.cli._output import fail

if TYPE_CHECKING:
    from loom.session import Workspace

checkpoints_app = typer.Typer(
    help="The private snapshots Loom takes before the agent changes files.",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    app.command("undo")(undo_command)
    app.command("redo")(redo_command)
    app.add_typer(checkpoints_app, name="checkpoints")


def _workspace() -> Workspace:
    from loom.session import LoomError, Workspace

    try:
        return Workspace.open(Path.cwd())
    except LoomError as exc:
        fail(str(exc))


def _restore(action: str, thread: str | None, force: bool) -> None:
    from loom.session import HandEdited, LoomError, restore_saved_thread

    workspace = _workspace()
    try:
        thread_id, report = restore_saved_thread(workspace, thread, action, force=force)  # type: ignore[arg-type]
    except HandEdited as exc:
        fail(f"{exc}. Save or move those edits, or run `loom {action} --force` to overwrite them.")
    except LoomError as exc:
        fail(str(exc))
    print_report(report, thread_id)


def print_report(report: Any, thread_id: str | None = None) -> None:
    where = f" in {thread_id}" if thread_id else ""
    verb = {"undo": "Undid", "redo": "Redid", "rewind": "Rewound"}[report.action]
    turns = len(report.turns)
    typer.echo(f"{verb} {turns} turn{'s' if turns != 1 else ''}{where}; files restored:")
    result = report.result
    from loom.core.text import visible  # file names the agent chose: shown as text

    for path in result.changed:
        typer.echo(f"  M {visible(str(path))}")
    for path in result.created:
        typer.echo(f"  A {visible(str(path))}")
    for path in result.removed:
        typer.echo(f"  D {visible(str(path))}")
    if not result.paths:
        typer.echo("  (none: the files were already as they were then)")
    for path in report.overwritten:
        typer.echo(f"  overwrote a hand edit: {visible(str(path))}")


def undo_command(
    thread: str = typer.Option(
        None, "--thread", "-t", help="Thread id or prefix (default: this project's newest)."
    ),
    force: bool = typer.Option(
        False, "--force", help="Overwrite files that were changed by hand since the agent's turn."
    ),
) -> None:
    """Restore the files to before the agent's last turn that changed them."""
    _restore("undo", thread, force)


def redo_command(
    thread: str = typer.Option(
        None, "--thread", "-t", help="Thread id or prefix (default: this project's newest)."
    ),
    force: bool = typer.Option(
        False, "--force", help="Overwrite files that were changed by hand since the undo."
    ),
) -> None:
    """Put back what the last `undo` took away."""
    _restore("redo", thread, force)


@checkpoints_app.command("gc")
def gc_command(
    keep_days: float = typer.Option(
        None, "--keep-days", min=0, help="Keep this many days (default [checkpoints] keep_days)."
    ),
    every_project: bool = typer.Option(
        False, "--all", help="Every project's store, not just this one."
    ),
) -> None:
    """Forget checkpoints older than keep_days and pack the store."""
    from loom.session import collect_checkpoint_garbage

    reports = collect_checkpoint_garbage(_workspace().config, keep_days, every_project)
    if not reports:
        typer.echo("No checkpoints to collect.")
        return
    for folder, report in reports.items():
        typer.echo(
            f"{folder}: removed {report.removed_checkpoints} checkpoint(s), kept "
            f"{report.kept_checkpoints}; {_size(report.size_before)} -> {_size(report.size_after)}"
        )


def usage_line() -> str:
    """One line for `loom doctor`."""
    from loom.session import checkpoint_usage

    found = checkpoint_usage()
    return (
        f"Checkpoints:  {_size(found.size_bytes)} for {found.projects} project(s) in "
        f"{found.folder} (`loom checkpoints gc` trims it)"
    )


def _size(count: int) -> str:
    size = float(count)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{count} B"
