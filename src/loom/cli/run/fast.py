"""`loom run` without the command framework (issue 25: Loom's own start-up share).

Typer and its Click cost `loom run` ~18 ms of CPU before the first model request
(importing them, then building the command from its signature). A plain command line,
every word one of `loom run`'s options with a usable value, is read here and handed to
the same `run_headless` the Typer command calls. Anything else (`--help`, an unknown or
repeated option, a value that starts with `-` (`-p -` among them), an empty value, a
bad --output-format or --max-turns, no task at all) returns None and Typer handles it,
with its usual messages. Without `-p` the task is read from stdin, as Typer's command
reads it. The option names are the Typer command's (loom.cli.run.command);
tests/cli/test_run_fast.py checks the two agree.
"""

from __future__ import annotations

import asyncio
import errno
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loom.cli.run.headless import RunOptions

VALUE_OPTIONS = {
    "-p": "prompt",
    "--prompt": "prompt",
    "-o": "output_format",
    "--output-format": "output_format",
    "-m": "model",
    "--model": "model",
    "--max-turns": "max_turns",
    "--max-budget-usd": "max_budget_usd",
    "--effort": "effort",
    "--permission-mode": "permission_mode",
    "-r": "resume",
    "--resume": "resume",
    "-w": "worktree",
    "--worktree": "worktree",
    "--project-root": "project_root",
}
EFFORTS = ("minimal", "low", "medium", "high")  # loom.llm.effort's (not imported here)
FLAGS = {
    "-y": "yes",
    "--yes": "yes",
    "--private": "private",
    "-v": "verbose",
    "--verbose": "verbose",
    "--include-partial-messages": "include_partial_messages",
    "--architect": "architect",
    "--no-sandbox": "no_sandbox",
    "--trust": "trust",
}


def try_fast_run(args: list[str]) -> int | None:
    """The exit code of `loom run ARGS`, or None when Typer should read ARGS."""
    given = parse(args)
    if given is None:
        return None
    from loom.cli.run.headless import RunOptions, read_prompt
    from loom.cli.run.output import OUTPUT_FORMATS

    output_format = str(given.get("output_format", "text"))
    turns = given.get("max_turns")
    if output_format not in OUTPUT_FORMATS:
        return None
    if turns is not None and not (str(turns).isascii() and str(turns).isdigit()):
        return None
    max_turns = None if turns is None else int(str(turns))
    if max_turns is not None and max_turns < 1:
        return None
    try:
        budget = _budget(given.get("max_budget_usd"))
    except ValueError:
        return None  # Typer says what a budget looks like
    effort = given.get("effort")
    if effort is not None and effort not in EFFORTS:
        return None  # Typer says what is allowed
    mode = _permission_mode(given.get("permission_mode"), bool(given.get("yes")))
    if mode is None:
        return None  # Typer lists the modes
    # Read last, as the Typer command reads it: without -p, from stdin. No task at all
    # goes to Typer, which finds stdin as this left it (read to its end) and says so.
    try:
        text = read_prompt(_text(given.get("prompt")))
    except KeyboardInterrupt:  # Ctrl-C (or SIGTERM) while waiting for stdin: as Click ends
        sys.stderr.write("\nAborted!\n")
        return 1
    if not text:
        return None
    folder = given.get("project_root")
    options = RunOptions(
        prompt=text,
        output_format=output_format,
        yes=bool(given.get("yes")),
        model=_text(given.get("model")) or None,
        private=bool(given.get("private")),
        max_turns=max_turns,
        max_budget_usd=budget,
        partial_messages=bool(given.get("include_partial_messages")),
        verbose=bool(given.get("verbose")),
        thread_id=_text(given.get("resume")),
        architect=bool(given.get("architect")),
        no_sandbox=bool(given.get("no_sandbox")),
        worktree=_text(given.get("worktree")) or None,
        trust=bool(given.get("trust")),
        project_root=None if folder is None else Path(str(folder)),
        effort=_text(effort) or None,
        permission_mode=mode,
    )
    return _run(options)


def parse(args: list[str]) -> dict[str, str | bool] | None:
    """`loom run`'s options by their parameter names (flags True), or None for anything
    this reader leaves to Typer."""
    given: dict[str, str | bool] = {}
    i = 0
    while i < len(args):
        name, equals, attached = args[i].partition("=")
        value: str | bool
        if name in FLAGS and not equals:
            key, value = FLAGS[name], True
        elif name in VALUE_OPTIONS and (not equals or name.startswith("--")):
            if equals:
                value = attached
            elif i + 1 < len(args):
                i += 1
                value = args[i]
            else:
                return None
            if not value or value.startswith("-"):
                return None  # how Click reads these is not guessed here
            key = VALUE_OPTIONS[name]
        else:
            return None
        if key in given:
            return None
        given[key] = value
        i += 1
    return given


def _text(value: str | bool | None) -> str | None:
    return None if value is None else str(value)


def _run(options: RunOptions) -> int:
    """`run_headless` as the Typer command runs it, with the same endings: a LoomError as
    one line (loom.cli.app.run_app), Ctrl-C and a closed pipe as Click ends a command."""
    from loom.cli.run.headless import run_headless
    from loom.session import LoomError

    try:
        return asyncio.run(run_headless(options, sys.stdout, sys.stderr))
    except LoomError as exc:
        from loom.cli.errors import error_line

        sys.stderr.write(error_line(exc) + "\n")
        return 1
    except (KeyboardInterrupt, EOFError):
        sys.stderr.write("\nAborted!\n")
        return 1
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the reader left
        return 1


def _budget(value: object) -> float | None:
    """--max-budget-usd as a number of dollars (None when not given); ValueError when it
    is not one."""
    if value is None:
        return None
    budget = float(str(value))
    if not 0 <= budget < float("inf"):  # NaN too
        raise ValueError(value)
    return budget


def _permission_mode(value: object, yes: bool) -> str | None:
    """The session's permission mode as the Typer command resolves it (--yes is
    bypassPermissions), or None for a name Typer should refuse."""
    from loom.core.permission_modes import parse_permission_mode

    try:
        mode = None if value is None else parse_permission_mode(str(value))
    except ValueError:
        return None
    return "bypassPermissions" if yes else mode or "default"
