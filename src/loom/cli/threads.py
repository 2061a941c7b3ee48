"""History commands: list, search, show, export, delete, restore, resume, doctor.

`list` and `search` usually never get here: `loom.cli.fast` answers them before Typer
is imported, with the same functions these commands call.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from loom.cli import permission_flag
from loom.cli._output import error_line, person_errors
from loom.cli.render_thread import print_resume_summary
from loom.cli.terminal import SafeConsole as Console  # a thread's text shown as text

__all__ = ["print_resume_summary", "register"]

if TYPE_CHECKING:
    from loom.session import Workspace

ID_HELP = "Thread id, or a unique prefix of it (the `T-` may be left out), as `loom list` shows."


def register(app: typer.Typer) -> None:
    # The first line of each docstring is the summary `loom --help` shows.
    for name, function in [
        ("list", list_command),
        ("search", search_command),
        ("show", show_command),
        ("export", export_command),
        ("delete", delete_command),
        ("restore", restore_command),
        ("resume", resume_command),
        ("doctor", doctor_command),
    ]:
        app.command(name)(function)


def _workspace() -> Workspace:
    from loom.session import Workspace

    return Workspace.for_data()


def list_command(
    limit: int = typer.Option(50, "--limit", "-n", min=0, help="Show at most this many."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    remote: bool = typer.Option(False, "--remote", help="List the sync server's threads."),
    tree: bool = typer.Option(
        False, "--tree", help="Sub-agents' threads under the thread that started them."
    ),
    all_projects: bool = typer.Option(
        False, "--all", help="Every project's threads, not only this folder's project's."
    ),
) -> None:
    """List this project's threads, newest activity first: id, title, project, branch,
    messages, last activity."""
    if remote:
        from loom.cli.remote import remote_list

        remote_list(limit, as_json)
        return
    from loom.cli.fast import run_list

    raise typer.Exit(run_list(limit, as_json, tree=tree, all_projects=all_projects))


def search_command(
    query: list[str] = typer.Argument(..., help="Words to find (prefixes match: `auth`)."),
    limit: int = typer.Option(20, "--limit", "-n", min=0, help="Show at most this many."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (with snippets)."),
    remote: bool = typer.Option(False, "--remote", help="Search on the sync server."),
) -> None:
    """Search threads: title, tags, branch, repo URL, commit SHA prefix and message text.

    Prints the best matches with a highlighted snippet and the full thread id.
    """
    text = " ".join(query)
    if remote:
        from loom.cli.remote import remote_search

        remote_search(text, limit, as_json)
        return
    from loom.cli.fast import run_search

    raise typer.Exit(run_search(text, limit, as_json))


def show_command(
    ref: str = typer.Argument(..., help=ID_HELP),
    show_all: bool = typer.Option(
        False, "--all", help="Also show rewound turns (side branches the model no longer sees)."
    ),
) -> None:
    """Show a thread's conversation: messages, tool calls and (shortened) tool output."""
    from loom.cli.render_thread import render_thread

    with person_errors():
        render_thread(_workspace().threads.load(ref), Console(), show_all=show_all)


def export_command(
    ref: str = typer.Argument(..., help=ID_HELP),
    fmt: str = typer.Option("json", "--format", "-f", help="json (the thread file) or markdown."),
    output: Path = typer.Option(None, "--output", "-o", help="Write to this file, not stdout."),
) -> None:
    """Export a thread as JSON (exactly the thread file format) or readable Markdown."""
    with person_errors():
        threads = _workspace().threads
        data = threads.export(ref, fmt, output)  # type: ignore[arg-type]
        if output is None:
            sys.stdout.buffer.write(data)
            return
        typer.echo(f"Exported {threads.resolve(ref)} to {output}", err=True)


def delete_command(ref: str = typer.Argument(..., help=ID_HELP)) -> None:
    """Delete a thread. It moves to the trash and `loom restore ID` brings it back."""
    with person_errors():
        thread_id = _workspace().threads.delete(ref)
    typer.echo(f"Deleted {thread_id}. Undo with: loom restore {thread_id}")


def restore_command(
    ref: str = typer.Argument(None, help="Id or prefix of a deleted thread; omit to list them."),
) -> None:
    """Restore a deleted thread (kept for 30 days after `loom delete`)."""
    if ref is None:
        deleted = _workspace().threads.deleted()
        typer.echo("\n".join(deleted) if deleted else "No deleted threads.")
        return
    with person_errors():
        thread_id = _workspace().threads.restore(ref)
    typer.echo(f"Restored {thread_id}.")


def resume_command(
    ref: str = typer.Argument(
        None, help=ID_HELP + " Leave it out to pick one from a list (in a terminal)."
    ),
    prompt: str = typer.Option(
        None, "--prompt", "-p", help="Continue headlessly with this message (as `loom run`)."
    ),
    model: str = typer.Option(
        None, "--model", "-m", help="provider:model-id from now on (default: the thread's)."
    ),
    yes: bool = typer.Option(
        False,
        "--yes",
        "-y",
        help="Allow every tool call (the dangerous-command floor still applies).",
    ),
    permission_mode: str = permission_flag.option(),
    private: bool = typer.Option(
        False, "--private", help="Keep this thread on this machine from now on."
    ),
    no_sandbox: bool = typer.Option(
        False, "--no-sandbox", help="Run shell and git commands unconfined (see `loom sandbox`)."
    ),
    output_format: str = typer.Option(
        "text", "--output-format", "-o", help="With -p: text | json | stream-json."
    ),
    effort: str = typer.Option(
        None, "--effort", help="How hard a reasoning model thinks: minimal, low, medium or high."
    ),
) -> None:
    """Show where a thread left off, then carry on: the chat, or one turn with -p.

    The summary: title, messages, last activity, git state, and warnings when the
    workspace or branch changed. Piped (no terminal, no -p), only the summary."""
    from loom.cli.chat import continue_thread
    from loom.cli.run.headless import check_effort_option

    if ref is None:
        ref = _pick_thread()
        if ref is None:
            return  # the person cancelled the picker
    with person_errors():
        threads = _workspace().threads
        thread = threads.load(ref)
        # with -p the answer is the output (as `loom run -r`): the summary is a header
        print_resume_summary(
            thread, Console(stderr=bool(prompt)), threads.resume_warnings(thread, Path.cwd())
        )
    code = continue_thread(
        thread.id,
        prompt,
        model=model,
        yes=yes,
        permission_mode=permission_mode,
        private=private,
        no_sandbox=no_sandbox,
        output_format=output_format,
        effort=check_effort_option(effort),
    )
    if code:
        raise typer.Exit(code)


def _pick_thread() -> str | None:
    """`loom resume` alone: the picker in a terminal; otherwise say what to pass."""
    import asyncio
    import sys

    from loom.session import recent_threads

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        typer.echo(
            error_line("give a thread ID (see `loom list`); the picker needs a terminal."),
            err=True,
        )
        raise typer.Exit(2)
    threads = recent_threads()
    if not threads:
        typer.echo("No threads yet. Start one with `loom`.")
        return None
    from loom.cli.thread_picker import pick_thread

    return asyncio.run(pick_thread(threads))


def doctor_command(
    repair: bool = typer.Option(False, "--repair", help="Rebuild the index and clean up."),
    restore: str = typer.Option(
        None, "--restore", metavar="FILE", help="Move a fixed file back from quarantine."
    ),
) -> None:
    """Check thread files, the search index and loom.db; list quarantined files.

    Exit code 1 when something needs attention (after --repair: when something is left,
    such as a quarantined file only a person can fix).
    """
    from loom.cli.render_doctor import print_doctor_report

    workspace = _workspace()
    if restore is not None:
        with person_errors():
            thread_id = workspace.threads.restore_quarantined(restore)
        typer.echo(f"Restored {thread_id} from quarantine; `loom show {thread_id}` opens it.")
        return
    report = workspace.threads.doctor(repair)
    print_doctor_report(report, workspace.paths, Console(soft_wrap=True), repaired=repair)
    from loom.cli.checkpoints import usage_line

    typer.echo(usage_line())
    if not report.healthy:
        raise typer.Exit(1)
