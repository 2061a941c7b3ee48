"""History commands: list, search, show, export, delete, restore, resume, doctor.

`list` and `search` usually never get here: `loom.cli.fast` answers them before Typer
is imported, with the same functions these commands call.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console

from loom.cli.render_thread import print_resume_summary

__all__ = ["print_resume_summary", "register"]

if TYPE_CHECKING:
    from loom.core.thread import Thread
    from loom.store.local import LocalThreadStore

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


@contextmanager
def _errors() -> Iterator[None]:
    """Store errors become one clear line on stderr and exit code 1."""
    from loom.store.atomic import StorageError
    from loom.store.base import AmbiguousThreadId, ThreadLocked, ThreadNotFound, ThreadUnreadable

    try:
        yield
    except (ThreadNotFound, AmbiguousThreadId, ThreadUnreadable, ThreadLocked) as exc:
        _fail(str(exc))
    except StorageError as exc:
        _fail(exc.strerror or str(exc))


def _fail(message: str) -> None:
    Console(stderr=True, soft_wrap=True).print(
        f"[red]loom: error:[/red] {message}", highlight=False, markup=True
    )
    raise typer.Exit(1)


def _store() -> LocalThreadStore:
    from loom.store.local import LocalThreadStore

    return LocalThreadStore()


@contextmanager
def _store_for_changes() -> Iterator[Any]:
    """The store delete/restore go through: the syncing one when logged in, so the
    change reaches the server too (queued; `loom sync` or the next session pushes it)."""
    from loom.store.factory import open_thread_store

    store = open_thread_store(background=False)
    try:
        yield store
    finally:
        close = getattr(store, "close", None)
        if close is not None:
            close()


def _load(store: LocalThreadStore, ref: str) -> Thread:
    from loom.store.base import ThreadNotFound

    thread_id = store.resolve(ref)
    thread = store.load(thread_id)
    if thread is None:  # deleted between resolve and load
        raise ThreadNotFound(ref)
    return thread


def list_command(
    limit: int = typer.Option(50, "--limit", "-n", min=0, help="Show at most this many."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    remote: bool = typer.Option(False, "--remote", help="List the sync server's threads."),
) -> None:
    """List threads, newest activity first: id, title, branch, messages, last activity."""
    if remote:
        from loom.cli.remote import remote_list

        remote_list(limit, as_json)
        return
    from loom.cli.fast import run_list

    raise typer.Exit(run_list(limit, as_json))


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


def show_command(ref: str = typer.Argument(..., help=ID_HELP)) -> None:
    """Show a thread's conversation: messages, tool calls and (shortened) tool output."""
    from loom.cli.render_thread import render_thread

    with _errors():
        render_thread(_load(_store(), ref), Console())


def export_command(
    ref: str = typer.Argument(..., help=ID_HELP),
    fmt: str = typer.Option("json", "--format", "-f", help="json (the thread file) or markdown."),
    output: Path = typer.Option(None, "--output", "-o", help="Write to this file, not stdout."),
) -> None:
    """Export a thread as JSON (exactly the thread file format) or readable Markdown."""
    if fmt not in ("json", "markdown", "md"):
        _fail(f"unknown format '{fmt}'; use --format json or --format markdown")
    with _errors():
        thread = _load(_store(), ref)
        if fmt == "json":
            from loom.store.serialize import thread_to_bytes

            data = thread_to_bytes(thread) + b"\n"
        else:
            from loom.cli.render_thread import thread_to_markdown

            data = thread_to_markdown(thread).encode()
        if output is None:
            sys.stdout.buffer.write(data)
            return
        from loom.store.atomic import atomic_write_bytes

        atomic_write_bytes(output, data)
        typer.echo(f"Exported {thread.id} to {output}", err=True)


def delete_command(ref: str = typer.Argument(..., help=ID_HELP)) -> None:
    """Delete a thread. It moves to the trash and `loom restore ID` brings it back."""
    with _errors(), _store_for_changes() as store:
        thread_id = store.resolve(ref)
        store.delete(thread_id)
    typer.echo(f"Deleted {thread_id}. Undo with: loom restore {thread_id}")


def restore_command(
    ref: str = typer.Argument(None, help="Id or prefix of a deleted thread; omit to list them."),
) -> None:
    """Restore a deleted thread (kept for 30 days after `loom delete`)."""
    if ref is None:
        deleted = _store().deleted()
        typer.echo("\n".join(deleted) if deleted else "No deleted threads.")
        return
    with _errors(), _store_for_changes() as store:
        thread_id = store.restore(ref)
    typer.echo(f"Restored {thread_id}.")


def resume_command(
    ref: str = typer.Argument(..., help=ID_HELP),
    prompt: str = typer.Option(
        None, "--prompt", "-p", help="Continue headlessly with this message (as `loom run`)."
    ),
) -> None:
    """Show where a thread left off, then carry on: the chat, or one turn with -p.

    The summary: title, messages, last activity, git state, and warnings when the
    workspace or branch changed. Piped (no terminal, no -p), only the summary."""
    from loom.cli.chat import continue_thread
    from loom.cli.render_thread import print_resume_summary

    with _errors():
        thread = _load(_store(), ref)
        # with -p the answer is the output (as `loom run -r`): the summary is a header
        print_resume_summary(thread, Console(stderr=bool(prompt)))
    code = continue_thread(thread.id, prompt)
    if code:
        raise typer.Exit(code)


def doctor_command(
    repair: bool = typer.Option(False, "--repair", help="Rebuild the index and clean up."),
) -> None:
    """Check thread files against the search index; list quarantined files.

    Exit code 1 when something needs attention (after --repair: when something is left).
    """
    from loom.cli.render_doctor import print_doctor_report
    from loom.paths import LoomPaths
    from loom.store import doctor

    paths = LoomPaths.from_env()
    report = doctor.repair(paths) if repair else doctor.diagnose(paths)
    print_doctor_report(report, paths, Console(), repaired=repair)
    if not report.healthy:
        raise typer.Exit(1)
