"""The `loom run` command as Typer sees it: its options and their help. The run itself
is loom.cli.run.headless's, which imports no Typer: a plain `loom run -p TEXT` reaches it through
loom.cli.run.fast without loading the command framework at all."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import typer

from loom.cli import permission_flag
from loom.cli.run.headless import (
    EFFORT_HELP,
    RunOptions,
    check_effort_option,
    check_output_format,
    read_prompt,
    run_headless,
)


def register(app: typer.Typer) -> None:
    app.command(
        "run",
        help="Run one task headlessly and print the answer (for scripts and CI).",
    )(run_command)


def run_command(
    ctx: typer.Context,
    prompt: str = typer.Option(
        None, "--prompt", "-p", help="The task. Omit it (or pass -) to read it from stdin."
    ),
    output_format: str = typer.Option(
        "text", "--output-format", "-o", help="text | json | stream-json"
    ),
    yes: bool = typer.Option(
        False,
        "--yes",
        "-y",
        help="Allow every tool call (the dangerous-command floor still applies).",
    ),
    permission_mode: str = permission_flag.option(),
    model: str = typer.Option(None, "--model", "-m", help="provider:model-id, e.g. openai:gpt-5"),
    effort: str = typer.Option(None, "--effort", help=EFFORT_HELP),
    private: bool = typer.Option(False, "--private", help="Keep this thread on this machine."),
    max_turns: int = typer.Option(
        None,
        "--max-turns",
        min=1,
        help="Ask the model at most N times; tool calls in its Nth answer are not run.",
    ),
    max_budget_usd: float = typer.Option(
        None,
        "--max-budget-usd",
        min=0.0,
        help="End the run once its model calls have cost more than this many US dollars.",
    ),
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="text: show tool activity on stderr (stream-json: no-op)."
    ),
    include_partial_messages: bool = typer.Option(
        False, "--include-partial-messages", help="stream-json: also print text as it streams."
    ),
    resume: str = typer.Option(None, "--resume", "-r", help="Continue thread ID instead."),
    architect: bool = typer.Option(
        False,
        "--architect",
        help="Plan with the strong model (model.architect), then carry out each step "
        "with the fast one (model.editor).",
    ),
    no_sandbox: bool = typer.Option(
        False, "--no-sandbox", help="Run shell and git commands unconfined (see `loom sandbox`)."
    ),
    worktree: str = typer.Option(
        None,
        "--worktree",
        "-w",
        help="Work in the project's git worktree NAME (made on branch loom/NAME, or reused).",
    ),
    trust: bool = typer.Option(
        False,
        "--trust",
        help="Apply this project's programs, endpoints and permissions for this run, "
        "trusted or not (see `loom trust`).",
    ),
    project_root: Path = typer.Option(
        None,
        "--project-root",
        help="The project folder (default: the git root around here). Needed to run in "
        "a home folder or /, which Loom otherwise refuses.",
    ),
) -> None:
    root = ctx.obj if isinstance(ctx.obj, dict) else {}
    check_output_format(output_format)
    text = read_prompt(prompt)
    if not text:
        raise typer.BadParameter("give the task with -p TEXT (or pipe it in)", param_hint="-p")
    options = RunOptions(
        prompt=text,
        output_format=output_format,
        yes=yes,
        permission_mode=permission_flag.resolved(
            permission_mode or root.get("permission_mode"), yes
        ),
        model=model or root.get("model"),
        private=private or bool(root.get("private")),
        max_turns=max_turns,
        max_budget_usd=max_budget_usd,
        partial_messages=include_partial_messages,
        verbose=verbose,
        thread_id=resume,
        architect=architect,
        no_sandbox=no_sandbox,
        worktree=worktree or root.get("worktree"),
        trust=trust,
        project_root=project_root,
        effort=check_effort_option(effort or root.get("effort")),
    )
    raise typer.Exit(asyncio.run(run_headless(options, sys.stdout, sys.stderr)))
