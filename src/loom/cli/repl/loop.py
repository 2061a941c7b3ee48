"""The REPL loop: read a line, run a turn or a slash command, show the events.

The prompt appears before the session is open (see `loom.cli.repl.starter`): a line
typed before then waits for it. Ctrl-C interrupts the running turn, not the program;
Ctrl-D (or /exit) leaves with the thread saved. No exception at the prompt or at a
permission question ends the REPL: it reports and reads input again.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom.cli.repl.starter import SessionStarter, StartFailed

if TYPE_CHECKING:
    from loom.core.events import PermissionRequest, SessionEvent
    from loom.session import Session, Workspace

RECENT_ON_RESUME = 6  # messages shown when the REPL opens on an existing thread
INTRO = "Loom · type a task, /help for commands, Ctrl-D to leave."


class ChatRepl:
    def __init__(self, starter: SessionStarter, interactive: bool | None = None) -> None:
        self.starter = starter
        self.interactive = sys.stdin.isatty() if interactive is None else interactive
        self.prompt: Any = None  # prompt_toolkit PromptSession (interactive only)
        self.console: Any = None  # rich Console, once the session is open
        self.renderer: Any = None
        self.status: Any = None  # the spinner line and toolbar text (loom.cli.repl.status)
        self.commands: Any = None  # slash commands (loom.cli.repl.commands)
        self._turn: asyncio.Task[str] | None = None
        self._interrupted = False  # "interrupted" said for this turn
        self._permission_lock = asyncio.Lock()
        self._background: set[asyncio.Future[Any]] = set()
        self.failure: str | None = None
        self.failure_code = 1  # the exit code when the session could not start

    @property
    def session(self) -> Session:
        """The open session; read only once `starter.ready` (a line typed sooner waits)."""
        return self.starter.open_session

    @property
    def workspace(self) -> Workspace:
        return self.starter.open_workspace

    # -- start-up ---------------------------------------------------------------------------

    async def run(self) -> int:
        """The loop; returns the exit code (1: the session could not start)."""
        from loom.cli.repl.status import Status

        sys.stdout.write(INTRO + "\n")
        sys.stdout.flush()
        self.status = Status(self)
        if self.interactive:
            from loom.cli.repl.prompt import make_prompt

            self.prompt = make_prompt(self)
        self.starter.on_ready(self._when_ready)
        self.starter.asks_plans(self._approve_plan)
        self.starter.on_failed(self.on_start_failed)
        if not self.interactive:
            self.starter.start()
        try:
            await self._loop()
        finally:
            self.status.stop()
        settled = self.starter.done or not self.interactive  # (piped input may end first)
        if settled and not self.starter.ready and self.failure is None:
            await self.ready()  # it failed while the prompt was up: say why
        return self.failure_code if self.failure else 0

    def _when_ready(self) -> None:
        """The session is open: set up the renderer, then show where things stand."""
        from loom.cli.chat_render import EventRenderer
        from loom.cli.repl.commands import SlashCommands
        from loom.cli.terminal import SafeConsole

        config = self.starter.config
        self.console = SafeConsole(highlight=False)
        self.renderer = EventRenderer(
            self.console,
            show_tool_output=config.ui.show_tool_output,
            project_root=Path(self.session.project_root),
            before_write=self.status.clear,
            markdown=True,
            show_progress=not self.status.enabled,  # the spinner line shows it instead
            tools=self.session.tools,
        )
        self.commands = SlashCommands(self)
        # Shift-Tab pressed while it opened (the header says the mode)
        self.session.set_permission_mode(self.starter.request.permission_mode)
        self.session.subscribe(self._on_event)
        watch = asyncio.ensure_future(self.workspace.watch_repo())
        self._keep(watch)
        if self.prompt is not None:
            from loom.cli.repl.prompt import apply_config

            apply_config(self.prompt, config)
        self.print_above_prompt(self._show_header)

    def _show_header(self) -> None:
        from loom.core.text import visible  # a key's or a file's name: one line, as text

        for warning in self.starter.warnings:
            self.renderer.line(f"warning: {visible(warning)}", style="yellow")
        notice = self.workspace.sandbox_notice()
        if notice:
            self.renderer.line(f"loom: {notice}", style="yellow")
        trust = self.workspace.trust
        untrusted = trust.notice() if trust is not None else None
        if untrusted:  # each setting the project's files make that is ignored, once
            self.renderer.line(f"loom: {untrusted}", style="yellow")
        session = self.session
        if session.permission_mode != "default":
            self.renderer.permission_mode(session.permission_mode)
        loaded = session.instructions_header()
        if loaded:
            self.renderer.line(loaded, style="dim")
        for problem in self.workspace.definition_problems(
            session.project_root, session.tools.names()
        ):
            self.renderer.line(f"loom: {visible(problem)}", style="yellow")  # agents, skills
        worktree = self.workspace.worktree
        if worktree is not None:
            self.renderer.line(
                f"worktree {worktree.name} (branch {worktree.branch}): {worktree.path}",
                style="magenta",
            )
        private = "private " if session.thread.is_private else ""
        self.renderer.line(f"{session.model} · {private}thread {session.thread.id}", style="dim")
        earlier = session.get_history()
        if not earlier:
            return
        shown = earlier[-RECENT_ON_RESUME:]
        if len(shown) < len(earlier):
            self.renderer.line(
                f"… {len(earlier) - len(shown)} earlier messages (/history)", style="dim"
            )
        self.renderer.history(shown)
        todos = session.todos
        if any(item.status != "completed" for item in todos):  # the plan left off here
            from loom.core.events import TodoList

            self.renderer.render(TodoList(session_id=session.id, todos=todos))
        if session.can_continue:
            self.renderer.line(
                "The last turn stopped before the model answered: /continue picks it up.",
                style="yellow",
            )

    def print_above_prompt(self, show: Any) -> None:
        """Run `show()` (which prints) now, above the prompt if one is being edited."""
        app = getattr(self.prompt, "app", None)
        if app is not None and app.is_running:
            from prompt_toolkit.application import run_in_terminal

            self._keep(asyncio.ensure_future(run_in_terminal(show)))
        else:
            show()

    async def ready(self) -> bool | None:
        """Wait for the session (a message typed early waits here); False: it failed;
        None: Ctrl-C while it was starting (the message is not sent; the start goes on,
        the prompt comes back: a big thread can take a while to open)."""
        if self.starter.ready:
            return True
        if not self.starter.done:
            sys.stdout.write("… starting the session (Ctrl-C: back to the prompt)\n")
            sys.stdout.flush()
        loop = asyncio.get_running_loop()
        waiting = asyncio.ensure_future(self.starter.wait())  # (the start itself is shielded)
        loop.add_signal_handler(signal.SIGINT, waiting.cancel)
        try:
            await waiting
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # the REPL itself is being stopped
            # (no renderer yet: it is made when the session is open)
            sys.stdout.write("\ninterrupted: the message was not sent; the session is still "
                             "starting\n")  # fmt: skip
            sys.stdout.flush()
            return None
        except StartFailed as exc:
            self.failure_code = exc.code
            self._fail(str(exc))
            return False
        except Exception as exc:  # never a traceback for a person
            from loom.paths import folder_error

            line = folder_error(exc) if isinstance(exc, OSError) else None
            self._fail(line or f"{type(exc).__name__}: {exc}")  # Loom's folder: what to set
            return False
        finally:
            loop.remove_signal_handler(signal.SIGINT)
        await asyncio.sleep(0)  # let the header print first
        return True

    def _fail(self, message: str) -> None:
        from loom.cli.errors import error_line

        self.failure = message
        sys.stderr.write(error_line(message) + "\n")
        sys.stderr.flush()

    def on_start_failed(self) -> None:
        """The background start failed while the prompt was up: leave the prompt."""
        app = getattr(self.prompt, "app", None)
        if app is not None and app.is_running:
            app.exit(exception=EOFError())

    # -- the loop -------------------------------------------------------------------------

    async def _loop(self) -> None:
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
                sys.stderr.write(f"error reading input: {exc}\n")
                if failures >= 3:  # the terminal is gone or unusable: leave, thread saved
                    break
                continue
            text = text.strip()
            if not text:
                continue
            started = await self.ready()
            if started is None:
                continue  # Ctrl-C while the session was starting: back to the prompt
            if not started:
                return
            if text.startswith("/"):
                if not await self.commands.run(text):
                    break
                continue
            await self.turn(text)

    async def _read_line(self) -> str:
        if self.prompt is not None:
            return await self.prompt.prompt_async(
                # given each time: a question asked through the same session (/rewind)
                # replaces the session's message
                lambda: f"{self.prompt_label()} › ",
                pre_run=self.starter.start,  # the session opens once the prompt is drawn
            )
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line:
            raise EOFError
        return line

    async def new_thread(self) -> bool:
        """/clear: close this session (its thread is kept) and open one on a new thread."""
        from loom.cli.repl.starter import SessionStarter, StartRequest

        old = self.starter
        request = StartRequest(
            model=old.open_session.model,
            private=old.request.private,
            auto_approve=old.request.auto_approve,
            permission_mode=old.open_session.permission_mode,
            cwd=old.request.cwd,
        )
        await old.close()
        self.starter = SessionStarter(request)
        self.starter.on_ready(self._when_ready)
        self.starter.asks_plans(self._approve_plan)
        self.starter.start()
        return bool(await self.ready())

    def mode(self) -> str:
        return self.session.get_mode() if self.starter.ready else "normal"

    def prompt_label(self) -> str:
        """`normal`, or in acceptEdits or plan mode `normal [plan]` (bypassPermissions,
        as with --yes, is named in the toolbar only)."""
        permission = self._permission_mode()
        shown = permission in ("acceptEdits", "plan")
        return f"{self.mode()} [{permission}]" if shown else self.mode()

    def cycle_permission_mode(self) -> None:
        """Shift-Tab: default -> acceptEdits -> plan -> default (the event says it)."""
        from loom.core.permission_modes import next_permission_mode

        wanted = next_permission_mode(self._permission_mode())
        session = self.starter.session
        if session is not None:  # its event's line goes above the prompt being edited
            self.print_above_prompt(lambda: session.set_permission_mode(wanted))
        else:  # pressed while the session opens: it takes the mode once open
            self.starter.request.permission_mode = wanted

    def _permission_mode(self) -> str:
        if self.starter.ready:
            return self.session.permission_mode
        return self.starter.request.permission_mode

    async def turn(self, text: str | None) -> None:
        """One turn from `text`; None carries on the stopped one (/continue). In plan
        mode, a turn that ends with a plan (the todo list) asks to carry it out."""
        session = self.session
        work = session.send_message(text) if text is not None else session.continue_turn()
        finished = await self._run_turn(work)
        while finished and session.permission_mode == "plan" and session.todos:
            verdict, change = await self._approve_plan(None)
            if verdict == "yes":
                finished = await self._run_turn(session.approve_plan())
            elif verdict == "edit":
                finished = await self._run_turn(session.send_message(change))
            else:
                return

    async def _run_turn(self, work: Any) -> bool:
        """Run one turn's work; True when it finished (not interrupted, no error)."""
        loop = asyncio.get_running_loop()
        finished = False
        turn = self._turn = asyncio.ensure_future(work)
        self._interrupted = False
        self.renderer.errors_shown.clear()
        self._arm_interrupt()
        self.status.turn_started()
        try:
            answer = await turn
            if answer and answer.strip() != self.renderer.last_text.strip():
                self.renderer.line(answer)  # e.g. architect mode's report of its steps
            finished = bool(answer) and not self._interrupted
        except asyncio.CancelledError:
            pass
        except Exception as exc:  # the session reports; the REPL goes on
            if str(exc) not in self.renderer.errors_shown:  # not shown already as an event
                self.renderer.line(f"error: {' '.join(str(exc).split())}", style="bold red")
            advice = self._after_failure()
            if advice:
                self.renderer.line(advice, style="dim")
        finally:
            self.status.turn_ended()
            loop.remove_signal_handler(signal.SIGINT)
            await asyncio.sleep(0)  # let queued events render before the next prompt
            self.renderer.finish()
            self._turn = None
        return finished

    def _after_failure(self) -> str:
        """What to say after a failed turn: retrying helps only after a transient error
        (a 429, a 5xx, a timeout); a refused connection, a bad request or a missing key
        need fixing first, and a thread the model never answered is not kept."""
        session = self.session
        if getattr(session, "never_answered", False):
            return "No thread is kept until the model answers; fix that and send it again."
        end = getattr(session, "last_turn", None)
        error = getattr(end, "error", None)
        if error is not None and error.worth_retrying:
            return "The thread is saved; send the message again to retry."
        return ""

    def _arm_interrupt(self) -> None:
        """Ctrl-C interrupts the running turn. Armed at its start and again after each
        question asked during it: a prompt that took SIGINT over must not leave the rest
        of the turn (a command the person just allowed) deaf to Ctrl-C."""
        if self._turn is not None and not self._turn.done():
            asyncio.get_running_loop().add_signal_handler(signal.SIGINT, self.interrupt)

    def interrupt(self) -> None:
        if self._turn is not None and not self._turn.done():
            if not self._interrupted:  # said once, however often Ctrl-C is pressed
                self._interrupted = True
                # No spinner after this: a frame drawn while the turn winds down (the
                # phase still says "running shell") could outlive the turn on screen.
                self.status.stop()
                self.renderer.line("interrupted", style="yellow")
            else:
                self.status.clear()  # the echoed ^C goes with the spinner line
            self.session.interrupt()

    # -- events -----------------------------------------------------------------------------

    def _on_event(self, event: SessionEvent) -> None:
        self.status.observe(event)
        self.renderer.render(event)
        if event.type == "permission_request":
            self._keep(asyncio.ensure_future(self._ask_permission(event)))

    def _keep(self, task: asyncio.Future[Any]) -> None:
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _approve_plan(self, _plan: Any) -> tuple[str, str]:
        """Architect mode, or a plan-mode turn's todo list: the plan was just shown (its
        event); y / edit / n."""
        from loom.cli.approve import ask_plan

        async with self._permission_lock:
            self.status.pause()
            try:
                return await ask_plan(self.renderer, self.interactive)
            except Exception as exc:  # a broken question declines, and the REPL goes on
                self.renderer.line(f"error at the plan question: {exc}; declined", style="red")
                return "no", ""
            finally:
                self.status.resume()
                self._arm_interrupt()

    async def _ask_permission(self, event: PermissionRequest) -> None:
        """Show what would happen, ask, answer the session, and never leave the turn
        waiting: whatever goes wrong here (a broken terminal, a bug), the call is denied
        and the REPL reads input again."""
        from loom.cli.approve import Answer, ApprovalPrompt

        answer = Answer("deny", said="deny")
        try:
            async with self._permission_lock:
                self.status.pause()
                asker = ApprovalPrompt(self.renderer, self.interactive)
                answer = await asker.ask(self.session, event)
                self.renderer.line(f"  → {answer.said}", style="dim")
        except Exception as exc:  # the question must end in an answer
            self.renderer.line(f"error at the permission question: {exc}; denied", style="red")
            answer = Answer("deny", said="deny")
        finally:
            self.status.resume()
            self._arm_interrupt()
            from loom.session import NoPendingPermission

            with contextlib.suppress(NoPendingPermission):  # the turn was interrupted
                self.session.respond_to_permission(answer.action, answer.meta)
            if answer.interrupt:  # Ctrl-C at the question: refuse and stop the turn
                self.interrupt()
