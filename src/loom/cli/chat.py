"""The REPL: `loom` (or `loom chat`, `loom resume ID`) in a project.

Streams the answer as it arrives, shows each tool call, asks before risky ones (one
key: y allow once, a allow always, n deny), and saves the thread after every step.
Ctrl-C interrupts the running turn, not the program; Ctrl-D (or /exit) leaves with the
thread saved. Slash commands: see HELP.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from pathlib import Path
from typing import Any

import typer

HELP = """\
/model [NAME]   show the model, or switch to NAME (provider:model-id)
/architect      plan with the strong model, carry out each step with the fast one
/normal         back to the normal agent loop
/history        show this conversation
/continue       carry on a turn that stopped before the model answered (after a crash)
/help           this list
/exit           leave (Ctrl-D does the same); the thread is saved
Ctrl-C interrupts the current turn."""

RECENT_ON_RESUME = 6  # messages shown when the REPL opens on an existing thread
PERMISSION_KEYS = {"y": "allow_once", "a": "allow_always", "n": "deny"}


def register(app: typer.Typer) -> None:
    app.command("chat", help="Talk to Loom in this project (what plain `loom` does).")(chat_command)


def chat_command(
    ctx: typer.Context,
    model: str = typer.Option(None, "--model", "-m", help="provider:model-id"),
    private: bool = typer.Option(False, "--private", help="Keep this thread on this machine."),
    no_sandbox: bool = typer.Option(
        False, "--no-sandbox", help="Run shell and git commands unconfined (see `loom sandbox`)."
    ),
) -> None:
    root = ctx.obj if isinstance(ctx.obj, dict) else {}
    code = start_chat(
        model=model or root.get("model"),
        private=private or bool(root.get("private")),
        no_sandbox=no_sandbox or bool(root.get("no_sandbox")),
    )
    raise typer.Exit(code)


def start_chat(
    *,
    model: str | None = None,
    private: bool = False,
    thread_id: str | None = None,
    cwd: Path | None = None,
    no_sandbox: bool = False,
) -> int:
    """Open the REPL (continuing `thread_id` when given); returns the exit code."""
    from rich.console import Console

    console = Console(highlight=False)
    err = Console(stderr=True, highlight=False)
    try:
        return asyncio.run(_chat(console, err, model, private, thread_id, cwd, no_sandbox))
    except KeyboardInterrupt:  # Ctrl-C while starting up
        return 130


async def _chat(
    console: Any,
    err: Any,
    model: str | None,
    private: bool,
    thread_id: str | None,
    cwd: Path | None,
    no_sandbox: bool = False,
) -> int:
    from loom.session import LoomError, SessionSpec, Workspace

    cwd = (cwd or Path.cwd()).resolve()
    try:
        sandbox_mode = "off" if no_sandbox else None
        workspace = Workspace.open(cwd, {"model.default": model, "sandbox.mode": sandbox_mode})
    except LoomError as exc:
        err.print(f"loom: error: {exc}", markup=False)
        return 1
    for warning in workspace.warnings:
        err.print(f"warning: {warning}", style="yellow", markup=False)
    from loom.cli.mcp import ask_project_approvals

    ask_project_approvals(workspace.config, err)  # project .mcp.json servers start programs
    try:
        session = await workspace.start_session(
            SessionSpec(model=model, private=private, thread=thread_id, cwd=cwd)
        )
        notice = workspace.sandbox_notice()
        if notice:
            err.print(f"loom: {notice}", style="yellow", markup=False)
        repl = ChatRepl(workspace, session, console, workspace.config)
        await repl.run()
    except LoomError as exc:
        err.print(f"loom: error: {exc}", markup=False)
        return 1
    finally:
        await workspace.shutdown()
    usage = session.usage
    if usage.input_tokens or usage.output_tokens:
        cost = f", ${usage.cost_usd:.4f}" if usage.cost_usd else ""
        console.print(
            f"This session: {usage.input_tokens:,} tokens in, {usage.output_tokens:,} out{cost}",
            style="dim",
            markup=False,
            soft_wrap=True,
        )
    console.print(
        f"Thread saved: {session.thread.id}  (continue with `loom resume {session.thread.id}`)",
        style="dim",
        markup=False,
        soft_wrap=True,
    )
    return 0


class ChatRepl:
    def __init__(self, workspace: Any, session: Any, console: Any, config: Any) -> None:
        from loom.cli.chat_render import EventRenderer

        self.workspace = workspace
        self.session = session
        self.console = console
        self.renderer = EventRenderer(console, show_tool_output=config.ui.show_tool_output)
        self.interactive = sys.stdin.isatty()
        self.prompt = _prompt_session(config) if self.interactive else None
        self._turn: asyncio.Task[str] | None = None
        self._permission_lock = asyncio.Lock()
        self._background: set[asyncio.Task[Any]] = set()

    # -- the loop -------------------------------------------------------------------------

    async def run(self) -> None:
        mode = "private " if self.session.thread.is_private else ""
        self.console.print(
            f"Loom · {self.session.model} · {mode}thread {self.session.thread.id}\n"
            "Type a task, /help for commands, Ctrl-D to leave.",
            style="dim",
            markup=False,
            soft_wrap=True,
        )
        earlier = self.session.get_history()
        if earlier:  # a resumed thread: where the conversation stands
            shown = earlier[-RECENT_ON_RESUME:]
            if len(shown) < len(earlier):
                self.renderer.line(
                    f"… {len(earlier) - len(shown)} earlier messages (/history)", style="dim"
                )
            self.renderer.history(shown)
            if self.session.can_continue:
                self.renderer.line(
                    "The last turn stopped before the model answered: /continue picks it up.",
                    style="yellow",
                )
        self.session.subscribe(self._on_event)
        watch = asyncio.ensure_future(self.workspace.watch_repo())
        self._background.add(watch)
        watch.add_done_callback(self._background.discard)
        while True:
            try:
                text = await self._read_line()
            except KeyboardInterrupt:
                continue  # Ctrl-C at the prompt clears the line
            except EOFError:
                break
            text = text.strip()
            if not text:
                continue
            if text.startswith("/"):
                if not await self.command(text):
                    break
                continue
            await self.turn(text)

    async def _read_line(self) -> str:
        if self.prompt is not None:
            return await self.prompt.prompt_async(f"{self.session.get_mode()} › ")
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line:
            raise EOFError
        return line

    async def turn(self, text: str | None) -> None:
        """One turn from `text`; None carries on the stopped one (/continue)."""
        loop = asyncio.get_running_loop()
        work = self.session.send_message(text) if text is not None else self.session.continue_turn()
        self._turn = asyncio.ensure_future(work)
        loop.add_signal_handler(signal.SIGINT, self.interrupt)
        try:
            answer = await self._turn
            if answer and answer.strip() != self.renderer.last_text.strip():
                self.renderer.line(answer)  # e.g. architect mode's report of its steps
        except asyncio.CancelledError:
            pass
        except Exception as exc:  # the session reports; the REPL goes on
            if str(exc) != self.renderer.last_error:  # not shown already as an event
                self.renderer.line(f"error: {' '.join(str(exc).split())}", style="bold red")
            self.renderer.line("The thread is saved; send the message again to retry.", style="dim")
        finally:
            loop.remove_signal_handler(signal.SIGINT)
            await asyncio.sleep(0)  # let queued events render before the next prompt
            self.renderer.end_line()
            self._turn = None

    def interrupt(self) -> None:
        if self._turn is not None and not self._turn.done():
            self.renderer.line("interrupted", style="yellow")
            self.session.interrupt()

    # -- events -----------------------------------------------------------------------------

    def _on_event(self, event: Any) -> None:
        self.renderer.render(event)
        if getattr(event, "type", "") == "permission_request":
            task = asyncio.ensure_future(self._ask_permission(event))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def _ask_permission(self, event: Any) -> None:
        from loom.cli.chat_render import describe_call
        from loom.session import NoPendingPermission

        async with self._permission_lock:
            what = describe_call(event.tool_name, event.arguments)
            self.renderer.line(f"Allow {what}?", style="bold yellow")
            answer = await self._read_permission_key()
            self.renderer.line(f"  → {answer.replace('_', ' ')}", style="dim")
            action = "deny" if answer == "interrupt" else answer
            with contextlib.suppress(NoPendingPermission):  # the turn was interrupted
                self.session.respond_to_permission(action)
            if answer == "interrupt":  # Ctrl-C at the question: refuse and stop the turn
                self.interrupt()

    async def _read_permission_key(self) -> str:
        prompt = "  [y] allow once  [a] allow always  [n] deny › "
        if not self.interactive:
            line = await asyncio.to_thread(sys.stdin.readline)
            return PERMISSION_KEYS.get(line.strip()[:1].lower(), "deny")
        from prompt_toolkit import PromptSession
        from prompt_toolkit.key_binding import KeyBindings

        bindings = KeyBindings()
        for key, action in PERMISSION_KEYS.items():
            bindings.add(key)(lambda e, action=action: e.app.exit(result=action))
            bindings.add(key.upper())(lambda e, action=action: e.app.exit(result=action))
        bindings.add("escape")(lambda e: e.app.exit(result="deny"))
        bindings.add("c-c")(lambda e: e.app.exit(result="interrupt"))
        bindings.add("<any>")(lambda e: None)  # other keys do nothing
        try:
            return await PromptSession(key_bindings=bindings).prompt_async(prompt)
        except (EOFError, KeyboardInterrupt):
            return "deny"

    # -- slash commands -----------------------------------------------------------------------

    async def command(self, text: str) -> bool:
        """Run one slash command; False means leave."""
        from loom.cli.chat_undo import HELP_LINES, SLASH_COMMANDS, run_slash
        from loom.session import LoomError

        name, _, arg = text.partition(" ")
        arg = arg.strip()
        if name in ("/exit", "/quit"):
            return False
        if name == "/help":
            self.renderer.line(HELP)
            for line in HELP_LINES:  # /undo /redo /rewind /compact
                self.renderer.line(line)
        elif name == "/model":
            if not arg:
                self.renderer.line(f"model: {self.session.model}")
            else:
                try:
                    self.session.update_model(arg)
                    self.renderer.line(f"model: {arg}", style="magenta")
                except LoomError as exc:
                    self.renderer.line(f"error: {exc}", style="bold red")
        elif name in ("/architect", "/normal"):
            self.session.set_mode(name[1:])
        elif name == "/history":
            self.renderer.history(self.session.get_history())
        elif name == "/continue":
            if self.session.can_continue:
                await self.turn(None)
            else:
                self.renderer.line("nothing to continue: the last turn finished", style="dim")
        elif name in SLASH_COMMANDS:  # /undo /redo /rewind /compact (chat_undo.py)
            await run_slash(self, name, arg)
        else:
            self.renderer.line(f"unknown command {name}; /help lists them", style="yellow")
        return True


def _prompt_session(config: Any) -> Any:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory

    from loom.paths import LoomPaths

    history_file = LoomPaths.from_env().state / "repl_history"
    try:
        history_file.parent.mkdir(parents=True, exist_ok=True)
        history: Any = FileHistory(str(history_file))
    except OSError:
        history = None
    from loom.cli.mention_complete import MentionCompleter

    return PromptSession(
        history=history,
        vi_mode=config.ui.editing_mode == "vi",
        completer=MentionCompleter(config.project_root),  # @path + Tab
        complete_while_typing=False,
    )


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
