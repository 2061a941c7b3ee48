"""`loom map` and `loom index` without Typer: the one implementation of each command,
reached both from the fast path in `loom.cli.fast` (skips loading the whole CLI, which
costs more than an unchanged repo's map) and from the Typer commands in `loom.cli.repo`."""

from __future__ import annotations

import sys
from pathlib import Path

from loom.core.text import visible_block

# `loom map`'s options by parameter name, and `loom index`'s (tests/cli/test_fast_argv.py
# checks them against the Typer commands)
MAP_OPTIONS = {"--tokens": "tokens", "-t": "tokens", "--focus": "focus", "-f": "focus",
               "--mention": "mention", "-m": "mention", "--root": "root"}  # fmt: skip
INDEX_OPTIONS = {"--root": "root"}


def try_fast_repo(args: list[str]) -> int | None:
    """`loom map ...` / `loom index [--root DIR]` with plain options; None: let Typer."""
    if args[0] == "map":
        return try_fast_map(args[1:])
    if args[1:] == [] or (len(args) == 3 and args[1] in INDEX_OPTIONS):
        return run_index(Path(args[2]) if len(args) == 3 else None)
    return None


def try_fast_map(rest: list[str]) -> int | None:
    """Run `loom map` for plain options; None (let Typer handle it) for anything else."""
    tokens: int | None = None
    focus: list[str] = []
    mention: list[str] = []
    root: Path | None = None
    i = 0
    while i < len(rest):
        arg, value = rest[i], rest[i + 1] if i + 1 < len(rest) else None
        name = MAP_OPTIONS.get(arg)
        if value is None or name is None:
            return None
        if name == "tokens":
            if not value.isdigit() or int(value) < 1:
                return None
            tokens = int(value)
        elif name == "focus":
            focus.append(value)
        elif name == "mention":
            mention.append(value)
        else:
            root = Path(value)
        i += 2
    return run_map(tokens, focus, mention, root)


def open_project(path: Path | None):  # -> loom.session.RepoApi
    """The repo services of the project around `path` (or the current directory), with
    config. Raises SystemExit(2) with a message for a bad folder or a broken config."""
    from loom.session import LoomError, RepoApi

    try:
        repo = RepoApi.at(path)
    except LoomError as exc:
        from loom.cli.errors import error_line

        sys.stderr.write(error_line(exc) + "\n")
        raise SystemExit(2) from exc
    for warning in repo.warnings:
        sys.stderr.write(visible_block(f"loom: warning: {warning}\n"))
    return repo


def run_map(tokens: int | None, focus: list[str], mention: list[str], root: Path | None) -> int:
    repo = open_project(root)
    for name in repo.missing(focus):
        sys.stderr.write(visible_block(f"warning: --focus {name}: no such file in {repo.root}\n"))
    text = repo.map(tokens, focus, mention)
    if not text:
        sys.stderr.write("(no source files with definitions found in this project)\n")
        return 0
    try:
        sys.stdout.write(visible_block(text))  # names of a repository's files and symbols
        sys.stdout.flush()
    except BrokenPipeError:  # `loom map | head`
        return 0
    return 0


def run_index(root: Path | None) -> int:
    import time

    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    repo = open_project(root)
    from loom.cli.terminal import SafeConsole

    console = SafeConsole(stderr=True)
    started = time.perf_counter()
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

        indexed = repo.index(report)
    stats, n_symbols, languages = indexed.stats, indexed.symbols, indexed.languages
    elapsed = time.perf_counter() - started
    out = SafeConsole()
    out.print(f"Indexed [bold]{escape(str(repo.root))}[/bold]")
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
            f"  skipped:   {stats.too_large:,} files over {indexed.max_file_bytes:,} "
            "bytes (repo.max_file_bytes)"
        )
    problems = [p for p in stats.problems if not p.endswith(": binary")]
    for problem in problems[:10]:
        out.print(f"  [yellow]note[/yellow]: {escape(problem)}")  # a file's name: any text
    if len(problems) > 10:
        out.print(f"  ... and {len(problems) - 10} more")
    return 0
