"""How `loom doctor` prints its report."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from loom.paths import LoomPaths

SHOW = 10


def print_doctor_report(report: Any, paths: LoomPaths, console: Console, *, repaired: bool) -> None:
    """`report`: what `Workspace.threads.doctor()` returns."""
    for line in report.repaired:
        console.print(f"[green]repaired:[/green] {line}", highlight=False)
    console.print(f"Thread files: {report.threads} in {paths.threads_dir}", highlight=False)
    console.print(f"Index rows:   {report.indexed} in {paths.database}", highlight=False)
    problems = [
        ("database", [report.database] if report.database != "ok" else []),
        ("not in the index yet", report.not_indexed),
        ("changed since indexed", report.outdated),
        ("index rows without a file", report.orphaned_rows),
        ("unreadable thread files", [f"{tid}: {why}" for tid, why in report.bad_files]),
        ("temp files left by a killed save", [p.name for p in report.temp_files]),
    ]
    for title, items in problems:
        if not items:
            continue
        console.print(f"[yellow]{title}: {len(items)}[/yellow]", highlight=False)
        for item in items[:SHOW]:
            console.print(f"  {item}", highlight=False, markup=False)
        if len(items) > SHOW:
            console.print(f"  … and {len(items) - SHOW} more", highlight=False)
    if report.quarantined:
        console.print(
            f"Quarantined files: {len(report.quarantined)} in {paths.quarantine_dir}",
            highlight=False,
        )
        for item in report.quarantined:
            console.print(f"  {item.path.name}: {item.reason}", highlight=False, markup=False)
    if report.healthy:
        console.print("[green]No problems found.[/green]")
    elif not repaired:
        console.print("Run `loom doctor --repair` to rebuild the index and clean up.")
