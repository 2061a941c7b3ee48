"""The `loom` console script.

Start-up is kept cheap: `--version` answers before anything heavy is imported, and the
Typer app (with its commands) is imported only when a real command runs.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args in (["--version"], ["-V"]):
        from loom import __version__

        sys.stdout.write(f"loom {__version__}\n")
        return
    if not args or args[0].startswith("-"):
        from loom.cli.repl_main import try_bare_repl  # plain `loom`: the prompt first

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
