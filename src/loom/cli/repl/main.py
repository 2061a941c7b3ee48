"""Opening the REPL without the command framework: plain `loom` (with `-m/--model`,
`--private`, `-c/--continue`) comes straight here from `loom.__main__`, so the prompt is
not kept waiting by Typer's import; `loom chat` and `loom resume` call `start_chat` too.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path
from typing import Any

EFFORTS = ("minimal", "low", "medium", "high")  # loom.llm.effort's (not imported here)
BARE_FLAGS = {
    "--private": "private",
    "-c": "continue",
    "--continue": "continue",
    "-y": "yes",
    "--yes": "yes",
    "--no-sandbox": "no_sandbox",
}
BARE_VALUES = {"-m": "model", "--model": "model", "-w": "worktree", "--worktree": "worktree",
               "--effort": "effort"}  # fmt: skip
# tests/cli/test_fast_argv.py checks both tables against the Typer app's own options


def try_bare_repl(args: list[str]) -> int | None:
    """The exit code of the REPL for `loom [-m MODEL] [--private] [-c]`, or None when the
    arguments are anything else (the full command line parser handles those)."""
    options: dict[str, Any] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        value = args[i + 1] if i + 1 < len(args) else ""
        if arg in BARE_FLAGS:
            options[BARE_FLAGS[arg]] = True
        elif arg.startswith("--model=") and len(arg) > len("--model="):
            options["model"] = arg[len("--model=") :]
        elif arg in BARE_VALUES and value and not value.startswith("-"):
            if BARE_VALUES[arg] == "effort" and value not in EFFORTS:
                return None  # the parser says what is allowed
            options[BARE_VALUES[arg]] = value
            i += 1
        else:
            return None
        i += 1
    return start_chat(
        model=options.get("model"),
        private=bool(options.get("private")),
        continue_latest=bool(options.get("continue")),
        auto_approve=bool(options.get("yes")),
        no_sandbox=bool(options.get("no_sandbox")),
        worktree=options.get("worktree"),
        effort=options.get("effort"),
    )


def start_chat(
    *,
    model: str | None = None,
    private: bool = False,
    thread_id: str | None = None,
    continue_latest: bool = False,
    auto_approve: bool = False,
    no_sandbox: bool = False,
    cwd: Path | None = None,
    worktree: str | None = None,
    effort: str | None = None,
    permission_mode: str = "default",
) -> int:
    """Open the REPL (continuing `thread_id`, or with `continue_latest` the newest thread
    of this project); returns the exit code. The prompt appears at once; the session
    opens behind it."""
    from loom.cli.repl.starter import StartRequest

    request = StartRequest(
        model=model,
        private=private,
        thread_id=thread_id,
        continue_latest=continue_latest,
        auto_approve=auto_approve,
        permission_mode="bypassPermissions" if auto_approve else permission_mode,
        no_sandbox=no_sandbox,
        cwd=cwd,
        worktree=worktree,
        effort=effort,
    )
    try:
        return asyncio.run(_chat(request))
    except KeyboardInterrupt:  # Ctrl-C while starting up
        return 130


def _project_files_above(folder: Path) -> bool:
    """Is there a `.loom.toml` or `.mcp.json` here or in a folder above (up to the git
    root)? Without one there is nothing to trust, and no config is read before the
    prompt."""
    for candidate in (folder, *folder.parents):
        if (candidate / ".mcp.json").is_file() or (candidate / ".loom.toml").is_file():
            return True
        if (candidate / ".git").exists():
            return False
    return False


def _ask_first(request: Any, cwd: Path) -> int | None:
    """Questions before the prompt, on a terminal: a home or root folder as the project,
    a project whose programs, endpoints and permissions were never trusted (its MCP
    servers among them). An exit code when the REPL should not open."""
    from loom.cli.terminal import SafeConsole
    from loom.cli.trust import ask_before_session

    err = SafeConsole(stderr=True, highlight=False)
    return ask_before_session(cwd, {"model.default": request.model}, err)


def _project_folder(request: Any) -> Path:
    """Where the session's project is: the thread's own when resuming one (its settings
    and trust govern it, wherever the person typed the command), else here."""
    here = (request.cwd or Path.cwd()).resolve()
    if request.thread_id and not request.worktree:
        from loom.session import LoomError, thread_project

        with contextlib.suppress(LoomError):  # a folder that is gone: the start says so
            return thread_project(request.thread_id) or here
    return here


async def _chat(request: Any) -> int:
    from loom.cli.repl.loop import ChatRepl
    from loom.cli.repl.starter import SessionStarter

    cwd = await asyncio.to_thread(_project_folder, request)
    if sys.stdin.isatty() and (_project_files_above(cwd) or _maybe_home(cwd)):
        code = await asyncio.to_thread(_ask_first, request, cwd)
        if code is not None:
            return code
    elif not sys.stdin.isatty():  # nobody to ask: a home or root folder stops it, as
        from loom.cli.trust import refuse_unasked  # it stops `loom run`

        code = refuse_unasked(cwd, sys.stderr)
        if code is not None:
            return code
    starter = SessionStarter(request)
    repl = ChatRepl(starter)
    try:
        code = await repl.run()
    finally:
        starter = repl.starter  # /clear replaces it
        session = starter.session
        await starter.close()  # stops the session (the thread is saved) and the workspace
    if session is None:
        return repl.failure_code if repl.failure else code
    if not session.keeps_thread:
        return code
    from loom.cli.repl.status import usage_in_text

    say = repl.renderer.line
    usage = session.usage
    if usage.input_tokens or usage.output_tokens:
        cost = ", cost unknown" if usage.cost_usd is None else f", ${usage.cost_usd:.4f}"
        say(
            f"This session: {usage_in_text(usage)}, {usage.output_tokens:,} out{cost}",
            style="dim",
        )
    say(
        f"Thread saved: {session.thread.id}  (continue with `loom resume {session.thread.id}`)",
        style="dim",
    )
    return code


def _maybe_home(cwd: Path) -> bool:
    """Cheap first look (no config read): is the project root (the git root, else here)
    the home folder or above it?"""
    home = Path.home().resolve()
    for candidate in (cwd, *cwd.parents):
        if (candidate / ".git").exists():
            return candidate == home or candidate in home.parents
    return cwd == home or cwd in home.parents


def continue_thread(
    thread_id: str,
    prompt: str | None = None,
    *,
    model: str | None = None,
    yes: bool = False,
    permission_mode: str | None = None,
    private: bool = False,
    no_sandbox: bool = False,
    output_format: str = "text",
    effort: str | None = None,
) -> int:
    """What `loom resume ID` does after printing its summary: with `-p`, one headless
    turn (like `loom run --resume`); in a terminal, the REPL on that thread; otherwise
    (piped, scripted) nothing more. The session options are `loom run`'s and the REPL's;
    root options (`loom --model X resume ID`) apply too."""
    import click

    from loom.cli import permission_flag

    context = click.get_current_context(silent=True)
    root = context.find_root().obj if context is not None else None
    root = root if isinstance(root, dict) else {}
    model = model or root.get("model")
    private = private or bool(root.get("private"))
    no_sandbox = no_sandbox or bool(root.get("no_sandbox"))
    effort = effort or root.get("effort")
    mode = permission_flag.resolved(permission_mode or root.get("permission_mode"), yes)
    if prompt:
        from loom.cli.run.headless import RunOptions, check_output_format, run_headless

        check_output_format(output_format)
        options = RunOptions(
            prompt=prompt, model=model, private=private, thread_id=thread_id, yes=yes,
            no_sandbox=no_sandbox, output_format=output_format, effort=effort,
            permission_mode=mode,
        )  # fmt: skip
        return asyncio.run(run_headless(options, sys.stdout, sys.stderr))
    if not sys.stdin.isatty():
        return 0
    return start_chat(
        model=model, private=private, thread_id=thread_id, auto_approve=yes,
        no_sandbox=no_sandbox, effort=effort, permission_mode=mode,
    )  # fmt: skip
