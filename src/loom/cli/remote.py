"""Server-side listing and search for `loom list --remote` and `loom search --remote`.

Both print (a table, or JSON with `as_json`); on failure they print why and raise
typer.Exit(1), so a caller that ignores the return value still exits non-zero. Search
falls back to the local index when the server cannot be reached, and says so.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import typer

from loom.cli._output import error_line

if TYPE_CHECKING:
    from loom.session import Workspace


def _workspace() -> Workspace:
    from loom.session import Workspace

    return Workspace.for_data()


def _error(exc: Exception) -> int:
    typer.secho(error_line(exc), err=True, fg="red")
    return 1


def _print_rows(rows: list[dict[str, Any]], with_snippet: bool = False) -> None:
    if not rows:
        typer.echo("no threads")
        return
    from loom.core.text import visible  # a server's threads: anyone's text, shown as text

    for row in rows:
        when = str(row.get("last_activity_at", ""))[:16].replace("T", " ")
        owner = visible(str(row.get("owner", "")))
        title = visible(str(row.get("title") or "(untitled)"))
        typer.echo(f"{visible(str(row['id']))}  {visible(when)}  {owner:<12} {title}")
        if with_snippet and row.get("snippet"):
            typer.echo(f"    {visible(' '.join(str(row['snippet']).split())[:160])}")


def remote_list(limit: int = 50, as_json: bool = False) -> int:
    """Threads on the server visible to this user, newest activity first."""
    return _exit_on_failure(_remote_list(limit, as_json))


def remote_search(query: str, limit: int = 20, as_json: bool = False) -> int:
    """Full-text search on the server; local search when the server is unreachable."""
    return _exit_on_failure(_remote_search(query, limit, as_json))


def _exit_on_failure(code: int) -> int:
    if code:
        raise typer.Exit(code)
    return code


def _remote_list(limit: int, as_json: bool) -> int:
    from loom.session import LoomError

    try:
        rows = _workspace().sync.remote_list(limit)
    except LoomError as exc:
        return _error(exc)
    if as_json:
        typer.echo(json.dumps({"source": "server", "threads": rows}))
    else:
        _print_rows(rows)
    return 0


def _remote_search(query: str, limit: int, as_json: bool) -> int:
    from loom.session import LoomError, Unavailable

    workspace = _workspace()
    try:
        hits = workspace.sync.remote_search(query, limit)
    except Unavailable as exc:
        typer.secho(f"{exc}; showing local results instead", err=True, fg="yellow")
        return _local_search(workspace, query, limit, as_json)
    except LoomError as exc:
        return _error(exc)
    if as_json:
        typer.echo(json.dumps({"source": "server", "hits": hits}))
    else:
        _print_rows(hits, with_snippet=True)
    return 0


def _local_search(workspace: Any, query: str, limit: int, as_json: bool) -> int:
    from dataclasses import asdict

    try:
        hits = workspace.threads.search(query, limit)
    except Exception as exc:  # the fallback must say what went wrong, not crash
        typer.secho(error_line(f"local search failed too: {exc}"), err=True, fg="red")
        return 1
    rows = [
        {**asdict(hit.summary), "owner": "local", "snippet": hit.snippet, "rank": hit.rank}
        for hit in hits
    ]
    if as_json:
        typer.echo(json.dumps({"source": "local", "hits": rows}))
    else:
        _print_rows(rows, with_snippet=True)
    return 0
