"""Opening the REPL without the command framework: plain `loom` (with `-m/--model`,
`--private`, `-c/--continue`) comes straight here from `loom.__main__`, so the prompt is
not kept waiting by Typer's import; `loom chat` and `loom resume` call `start_chat` too.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

BARE_FLAGS = {
    "--private": "private",
    "-c": "continue",
    "--continue": "continue",
    "-y": "yes",
    "--yes": "yes",
    "--no-sandbox": "no_sandbox",
}


def try_bare_repl(args: list[str]) -> int | None:
    """The exit code of the REPL for `loom [-m MODEL] [--private] [-c]`, or None when the
    arguments are anything else (the full command line parser handles those)."""
    options: dict[str, Any] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in BARE_FLAGS:
            options[BARE_FLAGS[arg]] = True
        elif arg in ("-m", "--model") and i + 1 < len(args) and not args[i + 1].startswith("-"):
            options["model"] = args[i + 1]
            i += 1
        elif arg.startswith("--model=") and len(arg) > len("--model="):
            options["model"] = arg[len("--model=") :]
        elif arg in ("-w", "--worktree") and i + 1 < len(args) and not args[i + 1].startswith("-"):
            options["worktree"] = args[i + 1]
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
) -> int:
    """Open the REPL (continuing `thread_id`, or with `continue_latest` the newest thread
    of this project); returns the exit code. The prompt appears at once; the session
    opens behind it."""
    from loom.cli.repl_session import StartRequest

    request = StartRequest(
        model=model,
        private=private,
        thread_id=thread_id,
        continue_latest=continue_latest,
        auto_approve=auto_approve,
        no_sandbox=no_sandbox,
        cwd=cwd,
        worktree=worktree,
    )
    try:
        return asyncio.run(_chat(request))
    except KeyboardInterrupt:  # Ctrl-C while starting up
        return 130


def _mcp_json_above(folder: Path) -> bool:
    """Is there a project `.mcp.json` here or in a folder above (up to the git root)?"""
    for candidate in (folder, *folder.parents):
        if (candidate / ".mcp.json").is_file():
            return True
        if (candidate / ".git").exists():
            return False
    return False


def _ask_mcp_approvals(request: Any) -> int | None:
    """A project that defines MCP servers gets its questions before the prompt (they
    start programs the repository chose); an exit code when its config is broken."""
    from rich.console import Console

    from loom.cli.mcp import ask_project_approvals
    from loom.config import load_config
    from loom.session import LoomError

    err = Console(stderr=True, highlight=False)
    try:
        config = load_config(request.cwd or Path.cwd(), {"model.default": request.model})
    except LoomError as exc:
        err.print(f"loom: error: {exc}", markup=False)
        return 1
    ask_project_approvals(config, err)
    return None


async def _chat(request: Any) -> int:
    from loom.cli.repl import ChatRepl
    from loom.cli.repl_session import SessionStarter

    if sys.stdin.isatty() and _mcp_json_above((request.cwd or Path.cwd()).resolve()):
        code = await asyncio.to_thread(_ask_mcp_approvals, request)
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
        return 1 if repl.failure else code
    if not session.thread.messages:  # nobody spoke: no thread file was made
        return code
    say = repl.renderer.line
    usage = session.usage
    if usage.input_tokens or usage.output_tokens:
        cost = ", cost unknown" if usage.cost_usd is None else f", ${usage.cost_usd:.4f}"
        say(
            f"This session: {usage.input_tokens:,} tokens in, {usage.output_tokens:,} out{cost}",
            style="dim",
        )
    say(
        f"Thread saved: {session.thread.id}  (continue with `loom resume {session.thread.id}`)",
        style="dim",
    )
    return code


def continue_thread(thread_id: str, prompt: str | None = None) -> int:
    """What `loom resume ID` does after printing its summary: with `-p`, one headless
    turn (like `loom run --resume`); in a terminal, the REPL on that thread; otherwise
    (piped, scripted) nothing more. Root options (`loom --model X resume ID`) apply."""
    import click

    context = click.get_current_context(silent=True)
    root = context.find_root().obj if context is not None else None
    root = root if isinstance(root, dict) else {}
    model, private = root.get("model"), bool(root.get("private"))
    if prompt:
        from loom.cli.run import RunOptions, run_headless

        options = RunOptions(prompt=prompt, model=model, private=private, thread_id=thread_id)
        return asyncio.run(run_headless(options, sys.stdout, sys.stderr))
    if not sys.stdin.isatty():
        return 0
    return start_chat(model=model, private=private, thread_id=thread_id)
