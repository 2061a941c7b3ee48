"""The REPL: `loom` (or `loom chat`, `loom resume ID`) in a project.

Streams the answer as it arrives, shows each tool call, asks before risky ones (one
key: y allow once, a allow always, n deny), and saves the thread after every step.
Ctrl-C interrupts the running turn, not the program; Ctrl-D (or /exit) leaves with the
thread saved. Slash commands: see HELP.
"""

from __future__ import annotations

import asyncio
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


def register(app: typer.Typer) -> None:
    app.command("chat", help="Talk to Loom in this project (what plain `loom` does).")(chat_command)


def chat_command(
    ctx: typer.Context,
    model: str = typer.Option(None, "--model", "-m", help="provider:model-id"),
    private: bool = typer.Option(False, "--private", help="Keep this thread on this machine."),
) -> None:
    root = ctx.obj if isinstance(ctx.obj, dict) else {}
    code = start_chat(
        model=model or root.get("model"), private=private or bool(root.get("private"))
    )
    raise typer.Exit(code)


def start_chat(
    *,
    model: str | None = None,
    private: bool = False,
    thread_id: str | None = None,
    cwd: Path | None = None,
) -> int:
    """Open the REPL (continuing `thread_id` when given); returns the exit code."""
    from rich.console import Console

    console = Console(highlight=False)
    err = Console(stderr=True, highlight=False)
    try:
        return asyncio.run(_chat(console, err, model, private, thread_id, cwd))
    except KeyboardInterrupt:  # Ctrl-C while starting up
        return 130


async def _chat(
    console: Any,
    err: Any,
    model: str | None,
    private: bool,
    thread_id: str | None,
    cwd: Path | None,
) -> int:
    from loom.config import ConfigError, load_config
    from loom.session.factory import OpenOptions, SetupError, open_session

    cwd = (cwd or Path.cwd()).resolve()
    try:
        config = load_config(cwd, {"model.default": model})
        for warning in config.warnings:
            err.print(f"warning: {warning}", style="yellow", markup=False)
        handle = await open_session(
            config,
            OpenOptions(model=model, private=private, thread_id=thread_id, cwd=cwd),
        )
    except (ConfigError, SetupError) as exc:
        err.print(f"loom: {exc}", markup=False)
        return 1
    repl = ChatRepl(handle, console, config)
    try:
        await repl.run()
    finally:
        await handle.close()
    usage = getattr(handle.session, "usage", None)
    if usage is not None and (usage.input_tokens or usage.output_tokens):
        cost = ", cost unknown" if usage.cost_usd is None else f", ${usage.cost_usd:.4f}"
        console.print(
            f"This session: {usage.input_tokens:,} tokens in, {usage.output_tokens:,} out{cost}",
            style="dim",
            markup=False,
            soft_wrap=True,
        )
    console.print(
        f"Thread saved: {handle.thread_id}  (continue with `loom resume {handle.thread_id}`)",
        style="dim",
        markup=False,
        soft_wrap=True,
    )
    return 0


class ChatRepl:
    def __init__(self, handle: Any, console: Any, config: Any) -> None:
        from loom.cli.chat_render import EventRenderer

        self.handle = handle
        self.console = console
        self.renderer = EventRenderer(
            console,
            show_tool_output=config.ui.show_tool_output,
            project_root=Path(handle.session.project_root),
        )
        self.interactive = sys.stdin.isatty()
        self.prompt = _prompt_session(config) if self.interactive else None
        self._turn: asyncio.Task[str] | None = None
        self._permission_lock = asyncio.Lock()
        self._background: set[asyncio.Task[Any]] = set()

    # -- the loop -------------------------------------------------------------------------

    async def run(self) -> None:
        mode = "private " if getattr(self.handle.thread, "is_private", False) else ""
        self.console.print(
            f"Loom · {self.handle.model} · {mode}thread {self.handle.thread_id}\n"
            "Type a task, /help for commands, Ctrl-D to leave.",
            style="dim",
            markup=False,
            soft_wrap=True,
        )
        earlier = self.handle.history()
        if earlier:  # a resumed thread: where the conversation stands
            shown = earlier[-RECENT_ON_RESUME:]
            if len(shown) < len(earlier):
                self.renderer.line(
                    f"… {len(earlier) - len(shown)} earlier messages (/history)", style="dim"
                )
            self.renderer.history(shown)
            if self.handle.can_continue:
                self.renderer.line(
                    "The last turn stopped before the model answered: /continue picks it up.",
                    style="yellow",
                )
        self.handle.on_event(self._on_event)
        watch = asyncio.ensure_future(self.handle.watch_repo())
        self._background.add(watch)
        watch.add_done_callback(self._background.discard)
        failures = 0
        while True:
            try:
                text = await self._read_line()
                failures = 0
            except KeyboardInterrupt:
                continue  # Ctrl-C at the prompt clears the line
            except EOFError:
                break
            except Exception as exc:  # a broken prompt must not end the REPL
                failures += 1
                self.renderer.line(f"error reading input: {exc}", style="red")
                if failures >= 3:  # the terminal is gone or unusable: leave, thread saved
                    break
                continue
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
            return await self.prompt.prompt_async(f"{self.handle.get_mode()} › ")
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line:
            raise EOFError
        return line

    async def turn(self, text: str | None) -> None:
        """One turn from `text`; None carries on the stopped one (/continue)."""
        loop = asyncio.get_running_loop()
        work = self.handle.send(text) if text is not None else self.handle.continue_turn()
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
            self.handle.interrupt()

    # -- events -----------------------------------------------------------------------------

    def _on_event(self, event: Any) -> None:
        self.renderer.render(event)
        if getattr(event, "type", "") == "permission_request":
            task = asyncio.ensure_future(self._ask_permission(event))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def _ask_permission(self, event: Any) -> None:
        """Show what would happen, ask, answer the session, and never leave the turn
        waiting: whatever goes wrong here (a broken terminal, a bug), the call is denied
        and the REPL reads input again."""
        from loom.cli.approve import Answer, ApprovalPrompt

        answer = Answer("deny", said="deny")
        try:
            async with self._permission_lock:
                asker = ApprovalPrompt(self.renderer, self.interactive)
                answer = await asker.ask(self.handle.session, event)
                self.renderer.line(f"  → {answer.said}", style="dim")
        except Exception as exc:  # the question must end in an answer
            self.renderer.line(f"error at the permission question: {exc}; denied", style="red")
            answer = Answer("deny", said="deny")
        finally:
            self.handle.respond_to_permission(answer.action, answer.meta)
            if answer.interrupt:  # Ctrl-C at the question: refuse and stop the turn
                self.interrupt()

    # -- slash commands -----------------------------------------------------------------------

    async def command(self, text: str) -> bool:
        """Run one slash command; False means leave."""
        from loom.session.factory import SetupError

        name, _, arg = text.partition(" ")
        arg = arg.strip()
        if name in ("/exit", "/quit"):
            return False
        if name == "/help":
            self.renderer.line(HELP)
        elif name == "/model":
            if not arg:
                self.renderer.line(f"model: {self.handle.model}")
            else:
                try:
                    self.handle.update_model(arg)
                    self.renderer.line(f"model: {arg}", style="magenta")
                except SetupError as exc:
                    self.renderer.line(f"error: {exc}", style="bold red")
        elif name in ("/architect", "/normal"):
            self.handle.set_mode(name[1:])
        elif name == "/history":
            self.renderer.history(self.handle.history())
        elif name == "/continue":
            if self.handle.can_continue:
                await self.turn(None)
            else:
                self.renderer.line("nothing to continue: the last turn finished", style="dim")
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
    return PromptSession(history=history, vi_mode=config.ui.editing_mode == "vi")


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
