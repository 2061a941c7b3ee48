"""How `loom doctor` prints its report: what it found, what to do, and the exit code."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from loom.paths import LoomPaths

SHOW = 10


def print_doctor_report(report: Any, paths: LoomPaths, console: Console, *, repaired: bool) -> None:
    """`report`: what `Workspace.threads.doctor()` returns."""
    for line in report.repaired:
        console.print(Text.assemble(("repaired:", "green"), f" {line}"), highlight=False)
    console.print(f"Thread files: {report.threads} in {paths.threads_dir}", highlight=False)
    console.print(f"Index rows:   {report.indexed} in {paths.database}", highlight=False)
    count, freed = report.cleaned_temp_files
    if count:
        size = f"{freed / 1e6:.1f} MB" if freed >= 100_000 else f"{freed} bytes"
        console.print(f"Removed {count} temp file(s) left by killed saves ({size}).")
    problems = [
        ("database", [report.database] if report.database != "ok" else []),
        ("not in the index yet", report.not_indexed),
        ("changed since indexed", report.outdated),
        ("index rows without a file", report.orphaned_rows),
        ("unreadable thread files", [f"{tid}: {why}" for tid, why in report.bad_files]),
        ("lock files nobody holds", [p.name for p in report.unheld_locks]),
    ]
    for title, items in problems:
        if not items:
            continue
        console.print(f"[yellow]{title}: {len(items)}[/yellow]", highlight=False)
        for item in items[:SHOW]:
            console.print(f"  {item}", highlight=False, markup=False)
        if len(items) > SHOW:
            console.print(f"  … and {len(items) - SHOW} more", highlight=False)
    _print_quarantine(report, paths, console)
    if report.healthy:
        console.print("[green]No problems found.[/green]")
        return
    console.print(f"[yellow]Found {report.problems} problem(s).[/yellow]", highlight=False)
    fixable = report.index_drift or report.bad_files or report.unheld_locks
    if (fixable or report.database != "ok") and not repaired:
        console.print("Run `loom doctor --repair` to rebuild the index and clean up.")
    if report.needs_a_person:
        console.print(
            "Quarantined files need you: fix one (it is a JSON thread file) and run "
            "`loom doctor --restore NAME`, or delete it."
        )


def _print_quarantine(report: Any, paths: LoomPaths, console: Console) -> None:
    waiting = report.needs_a_person
    originals = [q for q in report.quarantined if not q.needs_a_person]
    if waiting:
        console.print(
            f"[yellow]Quarantined files: {len(waiting)} in {paths.quarantine_dir}[/yellow]",
            highlight=False,
        )
        for item in waiting:
            console.print(f"  {item.path.name}: {item.reason}", highlight=False, markup=False)
    if originals:
        console.print(
            f"Originals of files Loom repaired: {len(originals)} in {paths.quarantine_dir} "
            "(kept for reference; delete them when you like)",
            highlight=False,
        )
        for item in originals[:SHOW]:
            console.print(f"  {item.path.name}: {item.reason}", highlight=False, markup=False)
