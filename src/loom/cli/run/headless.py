"""`loom run -p PROMPT`: one task, no person, for scripts and CI.

Output: `text` prints the final answer, `json` one result object, `stream-json` one
event per line (see loom.cli.run.output.writers). Without `--yes`, a tool that would ask
for permission is refused: the model is told why, and stderr says how to allow it.
Exit codes: 0 success, 1 error (setup, model, max turns), 2 usage.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from loom.cli.errors import error_line

if TYPE_CHECKING:
    from loom.cli.run.signals import StopSignals
    from loom.core.events import SessionEvent
    from loom.session import Session, Workspace

UNTRUSTED_HINT = "to apply them, run `loom trust` once (or pass --trust for this run)"


@dataclass
class RunOptions:
    prompt: str
    output_format: str = "text"
    yes: bool = False
    permission_mode: str = "default"  # --permission-mode (--yes: bypassPermissions)
    model: str | None = None
    private: bool = False
    max_turns: int | None = None
    partial_messages: bool = False
    verbose: bool = False  # text output: tool activity on stderr as it happens
    thread_id: str | None = None
    cwd: Path | None = None
    architect: bool = False  # plan with model.architect, carry out steps with model.editor
    no_sandbox: bool = False  # agent commands run unconfined ([sandbox] mode = "off")
    worktree: str | None = None  # work in the project's git worktree of this name
    trust: bool = False  # the project's powerful settings apply for this run (--trust)
    project_root: Path | None = None  # --project-root: the person names the project folder
    effort: str | None = None  # --effort: how hard a reasoning model thinks
    max_budget_usd: float | None = None  # --max-budget-usd: end the run once spent past it


EFFORT_HELP = "How hard a reasoning model thinks: minimal, low, medium or high."


def check_effort_option(effort: str | None) -> str | None:
    """--effort's value, or the command line's error naming the allowed ones."""
    from loom.session import check_effort

    try:
        return check_effort(effort)
    except ValueError as exc:
        import typer

        raise typer.BadParameter(
            str(exc).replace("effort must", "must"), param_hint="--effort"
        ) from None


def check_output_format(output_format: str) -> None:
    from loom.cli.run.output import OUTPUT_FORMATS

    if output_format not in OUTPUT_FORMATS:
        import typer

        raise typer.BadParameter(
            f"{output_format!r} is not one of {', '.join(OUTPUT_FORMATS)}",
            param_hint="--output-format",
        )


def read_prompt(prompt: str | None) -> str:
    if prompt not in (None, "-"):
        return prompt.strip()
    if sys.stdin is None or sys.stdin.isatty():
        return ""
    from loom.cli.run.signals import terminate_interrupts

    with terminate_interrupts():  # SIGTERM while waiting for stdin ends it as Ctrl-C does
        return sys.stdin.read().strip()


async def run_headless(options: RunOptions, out: TextIO, err: TextIO) -> int:
    """Run one prompt to the end; returns the exit code. Ctrl-C and SIGTERM end it
    wherever it waits (loom.cli.run.signals)."""
    from loom.cli.run.signals import StopSignals

    signals = StopSignals()
    try:
        return await _run_headless(options, out, err, signals)
    except asyncio.CancelledError:
        if not signals.absorb():
            raise
        err.write(f"loom: stopped by {signals.received[0]} before the task began\n")
        return 1
    finally:
        signals.close()


async def _run_headless(options: RunOptions, out: TextIO, err: TextIO, signals: StopSignals) -> int:
    from loom.cli.terminal import safe_stream
    from loom.session import BadInput, LoomError, Workspace, not_a_project

    err = safe_stream(err)  # its lines name files, keys, tools: shown, never acted on
    started = time.monotonic()
    cwd = (options.cwd or Path.cwd()).resolve()
    named = options.project_root
    if named is not None and not named.is_dir():
        err.write(error_line(f"--project-root {named} is not a folder") + "\n")
        return 2
    try:
        sandbox_mode = "off" if options.no_sandbox else None
        workspace = Workspace.open(
            cwd,
            {"model.default": options.model, "sandbox.mode": sandbox_mode},
            worktree=options.worktree,
            trust=True if options.trust else None,
            project_root=named,
            thread=options.thread_id,  # a resumed thread: its own project's settings
        )
    except LoomError as exc:
        err.write(error_line(exc) + "\n")
        return 2 if isinstance(exc, BadInput) else 1  # a bad --worktree name: a usage error
    if workspace.worktree is not None:
        wt = workspace.worktree
        err.write(f"loom: working in worktree {wt.name} (branch {wt.branch}): {wt.path}\n")
        cwd = wt.path
    problem = None if named is not None else not_a_project(workspace.project_root)
    if problem is not None:  # nobody to ask: refused unless the person named it
        err.write(
            error_line(
                f"{problem}; run Loom in a project folder, or pass "
                f"--project-root {workspace.project_root} to use it anyway"
            )
            + "\n"
        )
        signals.finishing()
        await workspace.shutdown()
        return 2
    for warning in workspace.warnings:
        err.write(f"loom: warning: {warning}\n")
    untrusted = workspace.trust.notice(UNTRUSTED_HINT) if workspace.trust else None
    if untrusted:  # nobody to ask: left out, said once
        err.write(f"loom: {untrusted}\n")
    try:
        session = await _start(workspace, options, cwd, err)
        if session is None:
            return 1
        code = await HeadlessRun(session, options, out, err, started, cwd).run(signals)
        _commit_worktree(workspace, session.id, err)
        return code
    finally:
        signals.finishing()  # the thread is being saved: a signal no longer cancels it
        await workspace.shutdown()


def _commit_worktree(workspace: Workspace, thread_id: str, err: TextIO) -> None:
    """After a run in a worktree: its changes committed on the worktree's branch, and
    the commands that show and merge them."""
    from loom.session import LoomError

    worktree = workspace.worktree
    if worktree is None:
        return
    try:
        made = workspace.worktrees.commit(worktree, f"loom: work of thread {thread_id}")
    except LoomError as exc:
        err.write(f"loom: warning: {exc}\n")
        return
    if made:
        err.write(
            f"loom: committed this run's changes on {worktree.branch} ({made[:12]}); "
            f"`loom worktree diff {worktree.name}` shows them, "
            f"`loom worktree merge {worktree.name}` merges them\n"
        )


async def _start(
    workspace: Workspace, options: RunOptions, cwd: Path, err: TextIO
) -> Session | None:
    """The session for this run, or None after saying on stderr why there is none."""
    from loom.session import LoomError, SessionSpec

    def on_refusal(refusal: Any) -> None:
        err.write(refusal_line(refusal, yes=options.yes) + "\n")

    spec = SessionSpec(
        model=options.model,
        private=options.private,
        auto_approve=options.yes,
        permission_mode=options.permission_mode,
        headless=True,
        thread=options.thread_id,
        max_turns=options.max_turns,
        effort=options.effort,
        cwd=cwd,
        on_refusal=on_refusal,
        mode="architect" if options.architect else "normal",
        on_mcp_notice=lambda line: print(f"loom: {line}", file=err),  # an MCP server's problem
    )
    try:
        session = await workspace.start_session(spec)
    except LoomError as exc:
        err.write(error_line(exc) + "\n")
        return None
    notice = workspace.sandbox_notice()
    if notice:
        err.write(f"loom: {notice}\n")
    loaded = session.instructions_header()
    if loaded:
        err.write(f"loom: {loaded}\n")
    for problem in workspace.definition_problems(session.project_root, session.tools.names()):
        err.write(f"loom: {problem}\n")  # agent and skill files skipped, and why
    return session


class HeadlessRun:
    """One prompt through an open session: events to the writer, signals end the turn,
    and the result (Claude Code's shape) at the end."""

    def __init__(
        self,
        session: Session,
        options: RunOptions,
        out: TextIO,
        err: TextIO,
        started: float,
        cwd: Path,
    ) -> None:
        from loom.cli.run.output import RunTally, make_writer
        from loom.cli.terminal import raw_stream, safe_stream

        self.session = session
        self.cwd = cwd
        self.options = options
        self.err = safe_stream(err)
        self.started = started
        self.writer = make_writer(
            options.output_format, out, partial_messages=options.partial_messages
        )
        self.tally = RunTally()
        self.activity = _activity_renderer(raw_stream(err)) if options.verbose else None
        self.stopped: list[str] = []  # why the turn was stopped from outside, if it was
        self.over_budget = False  # --max-budget-usd was passed
        self.budget_unknown = False  # a model with no known price answered

    def stop(self, why: str) -> None:
        """Ctrl-C, a CI job's SIGTERM, a reader gone: end the turn, keep the thread."""
        if not self.stopped:
            self.stopped.append(why)
            self.session.interrupt()

    def on_event(self, event: SessionEvent) -> None:
        self.tally.observe(event)
        self._check_budget()
        self.writer.event(event)
        if self.writer.reader_gone:
            self.stop("a closed output pipe")
        if self.activity is not None and event.type != "text_delta":
            self.activity.render(event)
        elif event.type == "llm_retry" and self.options.output_format == "text":
            # never silent for the length of a backoff: say what failed and when it retries
            self.err.write(
                f"loom: model call failed ({' '.join(event.error.split())}); retrying in "
                f"{event.delay_seconds:.1f} s (attempt {event.attempt})\n"
            )
            self.err.flush()
        elif event.type == "notice" and self.options.output_format == "text":
            source = f"{event.source}: " if event.source else ""
            self.err.write(f"loom: {source}{event.text}\n")
            self.err.flush()
        if event.type == "permission_request":  # HeadlessPolicy never asks; be safe anyway
            from loom.session import NoPendingPermission

            with contextlib.suppress(NoPendingPermission):
                self.session.respond_to_permission("deny")

    def _check_budget(self) -> None:
        """End the turn once the run's spend passes --max-budget-usd (the call that
        passed it is paid: its answer is kept, its tool calls are not run)."""
        budget, spent = self.options.max_budget_usd, self.tally.total_cost_usd
        if budget is None or self.over_budget:
            return
        if spent is None:
            if not self.budget_unknown:
                self.budget_unknown = True
                self.err.write(
                    "loom: warning: --max-budget-usd cannot be kept: the model's price is "
                    "unknown (see `loom models`), so its cost is not counted\n"
                )
            return
        if spent > budget:
            self.over_budget = True
            self.session.interrupt()

    async def run(self, signals: StopSignals) -> int:
        session, options = self.session, self.options
        init = {
            "session_id": session.id,
            "tools": session.tools.names(),
            "model": session.model,
            "cwd": str(self.cwd),
            "permissionMode": session.permission_mode,
            "thread_id": session.thread.id,
            "instructions": session.prompts.instructions.labels,
        }
        if options.output_format != "text":  # where the window goes (/context)
            init["context"] = (await session.context_view()).to_dict()
        self.writer.start(init)
        unsubscribe = session.subscribe(self.on_event)
        earlier = len(session.get_history())  # a resumed thread's messages are not this run's
        answer, failure = "", None
        if signals.received:  # arrived while the session started: no turn at all
            self.stop(signals.received[0])
        signals.on_stop = self.stop
        try:
            if not self.stopped:
                answer = await session.send_message(options.prompt)
        except Exception as exc:  # a failed turn is reported, never a traceback
            failure = _one_line(exc)
        finally:
            unsubscribe()
            await session.stop()  # answers open calls, snapshots git, saves
            signals.finishing()
        return self.finish(answer, failure, session.get_history()[earlier:])

    def finish(self, answer: str, failure: str | None, history: list[Any]) -> int:
        from loom.cli.run.output import RunResult

        if self.stopped:
            failure = f"stopped by {self.stopped[0]} before the task was done"
        self.tally.permission_denials = refusals(history)
        subtype = "success"
        if self.over_budget:
            subtype = "error_max_budget_usd"
            failure = (
                f"stopped after spending ${self.tally.total_cost_usd or 0:.4f}, past "
                f"--max-budget-usd {self.options.max_budget_usd:g}; continue with --resume"
            )
        elif self.options.max_turns is not None and hit_round_limit(history):
            subtype = "error_max_turns"
            failure = f"stopped at --max-turns {self.options.max_turns}; continue with --resume"
        elif failure is not None:
            subtype = "error_during_execution"
        result = RunResult(
            subtype=subtype,  # type: ignore[arg-type]
            result=answer or ("" if failure else self.tally.last_text),
            session_id=self.session.id,
            thread_id=self.session.thread.id if self.session.keeps_thread else None,
            duration_ms=round((time.monotonic() - self.started) * 1000),
            tally=self.tally,
            error=failure,
        )
        self.writer.finish(result)
        if not result.is_error:
            return 0
        thread_id = self.session.thread.id
        self.err.write(error_line(failure) + "\n")
        if self.session.keeps_thread:  # else nothing was said, or nothing answered
            self.err.write(
                f"loom: the thread is saved; continue it with `loom resume {thread_id}`\n"
            )
        return 1


def _activity_renderer(err: TextIO) -> Any:
    """The REPL's event lines (tools, retries, errors, plan steps), written to stderr."""
    from loom.cli.chat_render import EventRenderer
    from loom.cli.terminal import SafeConsole

    # the answer itself goes to stdout, once
    return EventRenderer(SafeConsole(file=err, highlight=False), show_messages=False)


def refusal_line(refusal: Any, yes: bool = False) -> str:
    """One line for the person about a refused call (the model reads its own text).
    `yes`: --yes was given, so what still asked is beyond it (a protected file such as
    .loom.toml, the dangerous-command floor)."""
    subject = " ".join(str(refusal.subject or "").split())
    if len(subject) > 80:
        subject = subject[:79] + "…"
    what = f"{refusal.tool} {subject}" if subject else refusal.tool
    if not refusal.unattended:
        return f"loom: refused {what}: {' '.join(refusal.why.split())}"
    why = f" ({' '.join(refusal.why.split())})" if refusal.why else ""
    if yes:
        return (
            f"loom: refused {what}: it needs approval{why} even with --yes, and nobody can "
            "give it in a headless run; approve it in the REPL (`loom resume`), or make "
            "that change yourself"
        )
    return (
        f"loom: refused {what}: it needs approval{why} and nobody can give it in a headless "
        f"run; pass --yes, or list {refusal.tool} under [permissions] auto_approve"
    )


def refusals(history: list[Any]) -> list[dict[str, Any]]:
    """Tool calls in this history that were refused (Claude Code's permission_denials)."""
    from loom.cli.run.output.result import denial, is_refusal

    refused = {m.tool_call_id for m in history if is_refusal(m)}
    return [
        denial(call)
        for m in history
        if m.role == "assistant"
        for call in m.tool_calls
        if call.id in refused
    ]


def hit_round_limit(history: list[Any]) -> bool:
    from loom.core.state import ROUND_LIMIT_RESULT

    marker = ROUND_LIMIT_RESULT.split("{", 1)[0]
    return any(m.role == "tool" and m.content.startswith(marker) for m in history)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
