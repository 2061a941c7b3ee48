"""`loom sandbox check`: what confines the agent's commands on this machine, proven by
running a few probes under it."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from loom.cli._output import error_line, warn

sandbox_app = typer.Typer(
    help="The sandbox for the agent's shell and git commands: see what is enforced.",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    app.add_typer(sandbox_app, name="sandbox")


@sandbox_app.command("check")
def check_command(
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Print what is enforced for agent commands here, proven by probes."""
    from loom.session import LoomError, Workspace, sandbox_report

    try:
        workspace = Workspace.open(Path.cwd())
    except LoomError as exc:
        typer.echo(error_line(exc), err=True)
        raise typer.Exit(1) from exc
    for warning in workspace.warnings:
        warn(f"loom: warning: {warning}")
    config = workspace.config
    report = sandbox_report(config, workspace.paths)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "mode": report.mode,
                    "backend": report.backend or None,
                    "problem": report.problem or None,
                    "network": config.sandbox.network,
                    "writable": [{"path": str(p), "why": why} for p, why in report.writable],
                    "read_only_in_project": [str(p) for p in report.protected],
                    "hidden": [{"path": str(p), "why": why} for p, why in report.hidden],
                    "enforced": report.enforced,
                    "probes": [
                        {"name": p.name, "passed": p.passed, "detail": p.detail}
                        for p in report.probes
                    ],
                    "missing_writable": report.missing,
                    "loom_code_writable": [str(p) for p in report.exposed],
                },
                indent=2,
            )
        )
    else:
        for line in render_report(report, config.sandbox.network):
            typer.echo(line)
    wanted = report.mode == "on"  # exit 1: the sandbox is wanted but does not hold here
    raise typer.Exit(1 if wanted and not report.holds else 0)


def render_report(report: object, network: bool) -> list[str]:
    from loom.session import SandboxReport

    assert isinstance(report, SandboxReport)
    if report.mode != "on":
        how = "each shell command asks first" if report.mode == "ask" else "as usual"
        return [
            f'Sandbox: OFF ([sandbox] mode = "{report.mode}"). Agent commands run unconfined; '
            f"permissions {how}.",
        ]
    if not report.backend:
        return [
            f"Sandbox: NOT AVAILABLE: {report.problem}.",
            "Agent commands would run unconfined, so every shell command asks first "
            "(--yes does not cover it; --no-sandbox runs them unconfined).",
        ]
    lines = [
        f"Sandbox: on ({report.backend}) for the agent's shell commands (its git tool "
        "runs outside it, through Loom's hardened git runner).",
        "Writable:",
        *(f"  {path}  ({why})" for path, why in report.writable),
    ]
    if report.missing:
        lines.append("  skipped (do not exist): " + ", ".join(report.missing))
    if report.hidden:
        lines.append("Hidden (Loom's own state; an empty read-only folder inside):")
        lines += [f"  {path}  ({why})" for path, why in report.hidden]
    if report.protected:
        lines.append("Read-only (git's folders and hooks folder; Loom's project files that exist):")
        lines += [f"  {path}" for path in report.protected]
    lines.append("Enforced:")
    lines += [f"  {line}" for line in report.enforced]
    lines.append("Checked just now:")
    for probe in report.probes:
        mark = "ok  " if probe.passed else "FAIL"
        lines.append(f"  {mark} {probe.name}: {probe.detail}")
    lines.append(
        "Taken away after each command: any .loom.toml, .mcp.json or .loom/ file it "
        "created or changed, at any depth of the project (moved to the quarantine)."
    )
    lines.append(
        "Not sandboxed: language servers Loom starts, and Loom's own file tools (those "
        "are confined to the project by the tools themselves)."
    )
    if report.exposed:
        lines.append(
            f"Warning: Loom's own code ({', '.join(map(str, report.exposed))}) lies in a writable "
            "folder, so a command could change what the next `loom` runs outside the "
            "sandbox; install Loom outside the project to close that: `uv tool install .` "
            "or `pipx install .` in Loom's source folder."
        )
    if not network:
        lines.append("Network: turn it on with `[sandbox] network = true` in your user config.")
    return lines
