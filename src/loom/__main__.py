"""The `loom` console script.

Start-up is kept cheap: `--version` answers before anything heavy is imported, and the
Typer app (with its commands) is imported only when a real command runs.
"""

from __future__ import annotations

import sys

READING_COMMANDS = frozenset({"list", "search", "show", "export"})
"""Commands that work on a read-only data folder (the seed: history stays readable)."""

SESSION_FACES = frozenset({"run", "web", "acp"})
"""Commands (besides the bare REPL) that start sessions: their start-up runs with the
collector paused (loom.startup_gc)."""


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if argv is None and (not args or args[0].startswith("-") or args[0] in SESSION_FACES):
        from loom import startup_gc

        startup_gc.pause()  # until the first session is assembled (the Workspace)
    if args in (["--version"], ["-V"]):
        from loom import __version__

        sys.stdout.write(f"loom {__version__}\n")
        return
    if "--help" not in args and "-h" not in args:
        from loom.paths import folder_problem

        # a path through a file stops every command; a read-only folder only those that
        # write (list, search, show and export read the thread files directly then)
        reading = bool(args) and args[0] in READING_COMMANDS
        problem = folder_problem(writing=not reading)
        if problem:
            _fail(problem)
    try:
        _dispatch(args)
    except OSError as exc:  # Loom's own folder broke under the command: one line
        from loom.paths import folder_error

        line = folder_error(exc)
        if line is None:
            raise
        _fail(line)


def _fail(line: str) -> None:
    from loom.cli.errors import error_line  # a folder's name: shown as text

    sys.stderr.write(error_line(line) + "\n")
    raise SystemExit(1)


def _dispatch(args: list[str]) -> None:
    if not args or args[0].startswith("-"):
        from loom.cli.repl.main import try_bare_repl  # plain `loom`: the prompt first

        code = try_bare_repl(args)
        if code is not None:
            raise SystemExit(code)
    from loom.cli.fast import try_fast_path

    code = try_fast_path(args)
    if code is not None:
        raise SystemExit(code)
    from loom.cli.app import run_app

    run_app(args)


if __name__ == "__main__":
    main()
