"""`loom map` and `loom index`: the repo map and the file/symbol index, for people."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    app.command("map", help="Show the ranked repo map Loom gives the model.")(map_command)
    app.command("index", help="Index the project's files and symbols (with progress).")(
        index_command
    )


def map_command(
    tokens: int = typer.Option(None, "--tokens", "-t", min=1,
                               help="Token budget (default: config repo.map_tokens)."),
    focus: list[str] = typer.Option([], "--focus", "-f", help=(
        "A file in the conversation: ranks what it uses higher (its own definitions are "
        "left out, the model already sees it). Repeatable.")),
    mention: list[str] = typer.Option([], "--mention", "-m",
                                      help="An identifier the user mentioned. Repeatable."),
    root: Path = typer.Option(None, "--root", help="Project folder (default: this one)."),
) -> None:
    from loom.cli.repo_fast import run_map

    raise typer.Exit(run_map(tokens, focus, mention, root))


def index_command(
    root: Path = typer.Option(None, "--root", help="Project folder (default: this one)."),
) -> None:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from loom.cli.repo_fast import open_project

    intel = open_project(root)
    console = Console(stderr=True)
    started = time.perf_counter()
    try:
        with Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        ) as progress:
            task = progress.add_task("Parsing", total=None)

            def report(done: int, total: int) -> None:
                progress.update(task, completed=done, total=total)

            stats = intel.refresh(report)
        n_symbols = sum(r.n_defs for r in intel.index.files.values())
        languages = Counter(r.language for r in intel.index.files.values() if r.language)
    finally:
        intel.close()
    elapsed = time.perf_counter() - started
    out = Console()
    out.print(f"Indexed [bold]{intel.root}[/bold]")
    out.print(
        f"  files:     {stats.files:,} ({len(stats.added):,} new, "
        f"{len(stats.changed):,} changed, {len(stats.removed):,} removed, "
        f"{stats.parsed:,} parsed)"
    )
    langs = ", ".join(f"{name} {count:,}" for name, count in languages.most_common())
    out.print(f"  languages: {langs or 'none recognised'}")
    out.print(f"  symbols:   {n_symbols:,} definitions")
    out.print(f"  time:      {elapsed:.2f} s")
    if stats.too_large:
        out.print(
            f"  skipped:   {stats.too_large:,} files over {intel.settings.max_file_bytes:,} "
            "bytes (repo.max_file_bytes)"
        )
    problems = [p for p in stats.problems if not p.endswith(": binary")]
    for problem in problems[:10]:
        out.print(f"  [yellow]note[/yellow]: {problem}")
    if len(problems) > 10:
        out.print(f"  ... and {len(problems) - 10} more")
