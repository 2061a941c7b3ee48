"""`loom trust [--yes] [--revoke] [--show]`, and the question the REPL asks before its first
prompt: a project's programs, endpoints and permissions apply once the person trusts it.

The question shows every item the project's files set (the program and its arguments,
the URL, env names with secrets masked, the permissions) and, when they changed since
the last answer, the difference. Both answers are remembered for these exact settings.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from loom.cli._output import error_line, say, warn


def register(app: typer.Typer) -> None:
    app.command(
        "trust",
        help="Review and trust this project's programs, endpoints and permissions "
        "(its .loom.toml and .mcp.json); until then Loom ignores them.",
    )(trust_command)


def trust_command(
    yes: bool = typer.Option(
        False, "--yes", "-y", help="Trust what the project sets now, without a question."
    ),
    revoke: bool = typer.Option(False, "--revoke", help="Forget the decision for this project."),
    show: bool = typer.Option(False, "--show", help="Show the settings and the decision only."),
) -> None:
    from loom.config import ConfigError, load_config

    try:
        config = load_config(Path.cwd())
    except ConfigError as exc:
        say(error_line(exc), err=True)
        raise typer.Exit(1) from exc
    for warning in config.warnings:
        warn(f"loom: warning: {warning}")
    trust = config.trust
    if revoke:
        try:
            found = trust.revoke()
        except OSError as exc:
            said = error_line(f"cannot forget the decision ({exc}); nothing changed")
            say(said, err=True)
            raise typer.Exit(1) from exc
        say(
            f"Forgot the trust decision for {trust.root}; its settings are ignored until "
            "you trust it again." if found else f"No trust decision was recorded for {trust.root}."
        )  # fmt: skip
        return
    if not trust.items:
        say(f"{trust.root} sets nothing that needs trust; everything in it applies.")
        return
    for line in trust.question_lines():
        typer.echo(line)
    typer.echo(f"State: {describe_state(trust)}")
    if show or trust.state in ("trusted",):
        return
    if not yes:
        if not sys.stdin.isatty():
            typer.echo("Not a terminal: pass --yes to trust these settings.", err=True)
            raise typer.Exit(1)
        if not ask_yes_no("Trust this project with these settings? [y/N] "):
            _say(*decide(trust, trusted=False))
            return
    _say(*decide(trust, trusted=True))


def _say(ok: bool, text: str) -> None:
    say(text, err=not ok)
    if not ok:
        raise typer.Exit(1)


def describe_state(trust: Any) -> str:
    when = f" ({trust.record.decided_at})" if trust.record is not None else ""
    return {
        "trusted": f"trusted{when}: these settings apply",
        "flag": "trusted for this run only (--trust)",
        "untrusted": "not trusted: these settings are ignored",
        "changed": "not trusted: they changed since your last answer, so they are ignored",
        "declined": f"you chose not to trust it{when}: these settings are ignored",
        "none": "nothing needs trust",
    }.get(trust.state, str(trust.state))


def decide(trust: Any, *, trusted: bool) -> tuple[bool, str]:
    """Record the answer: (recorded, what to tell the person)."""
    try:
        if trusted:
            trust.trust()
        else:
            trust.decline()
    except OSError as exc:
        return False, f"loom: cannot record the decision ({exc}); nothing was trusted"
    if trusted:
        return True, f"Trusted {trust.root}: its settings apply from now on (until they change)."
    return True, "Not trusted: Loom ignores these settings here. Later: `loom trust`."


def ask_yes_no(question: str, dialog: Any = None) -> bool:
    """One key answers, as at a permission question: y yes; n, Enter, Esc or Ctrl-D no
    (`y⏎` is a yes too); Ctrl-C stops. `dialog`: the questions asked one after another."""
    from loom.cli.permission_keys import Dialog, ask_key

    return ask_key(question, {"y": "yes", "n": "no"}, dialog or Dialog(), enter="no") == "yes"


def ask_before_session(cwd: Path, overrides: dict[str, Any], err: Any) -> int | None:
    """The REPL's questions before its first prompt, on a terminal only: a folder that is
    not a project (home, `/`), then a project whose powerful settings were never
    answered (or changed since). An exit code when the REPL should not open."""
    from loom.config import ConfigError, load_config
    from loom.session import not_a_project

    try:
        config = load_config(cwd, overrides)
    except ConfigError as exc:
        err.print(error_line(exc), markup=False)
        return 1
    trust = config.trust
    for said in trust.problems if trust is not None else ():  # the trust store's, once:
        err.print(f"loom: warning: {said}", markup=False)  # the session will not repeat it
    from loom.cli.permission_keys import Dialog

    dialog = Dialog()
    problem = not_a_project(config.project_root)
    if problem is not None:
        err.print(
            f"{problem}. Loom works in one project folder; agent commands will not be "
            "able to write here.",
            markup=False,
        )
        if not ask_yes_no(f"Use {config.project_root} as the project anyway? [y/N] ", dialog):
            err.print("Not started: `cd` into a project folder and run `loom` there.")
            return 1
    if trust is None or not trust.needs_question:
        return None
    for line in trust.question_lines():
        err.print(line, markup=False)
    err.print(
        "Trusting lets these run and apply; otherwise Loom ignores them (everything else works).",
        markup=False,
    )
    _ok, said = decide(trust, trusted=ask_yes_no("Trust this project? [y/N] ", dialog))
    err.print(said, markup=False)
    return None


def refuse_unasked(cwd: Path, err: Any) -> int | None:
    """The REPL without a terminal (its input piped): nobody can be asked whether a home
    or root folder should be the project, so it is refused as `loom run` refuses it.
    An exit code when the REPL should not open."""
    from loom.config import find_project
    from loom.session import not_a_project

    root, _ = find_project(cwd)
    problem = not_a_project(root)
    if problem is None:
        return None
    err.write(
        error_line(
            f"{problem}; run Loom in a project folder (or `loom run -p TASK "
            f"--project-root {root}` to use it anyway)"
        )
        + "\n"
    )
    return 2
