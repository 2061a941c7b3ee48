"""One ACP session bound to a running Loom session: events out, permission questions to
the editor, a prompt turn in, cancel.

Events arrive from the session's bus as they are published (a callback, on the event
loop); they are turned into `session/update` notifications and sent in order by one
sender task, so the editor sees text, tool calls and their results in the order they
happened. A permission question is asked from the same task: updates after it wait,
as the session itself does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, assert_never

from acp.schema import (
    PermissionOption,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
    StopReason,
    ToolCallUpdate,
)

from acp import RequestError
from loom.acp import updates
from loom.core.events import (
    ArchitectPlan,
    ArchitectStep,
    BackgroundCommandChanged,
    ContextCompacted,
    ConversationRewound,
    DecisionCascade,
    FilesRestored,
    LlmRetry,
    ModeChanged,
    NewMessage,
    Notice,
    PermissionModeChanged,
    PermissionRequest,
    SessionError,
    SessionEvent,
    SessionStatus,
    SubagentMessage,
    SubagentStatus,
    SyncError,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    TodoList,
    ToolComplete,
    ToolExecuting,
    ToolProgress,
    TurnComplete,
)
from loom.core.messages import AssistantMessage, ToolMessage
from loom.core.permission_modes import PERMISSION_MODES
from loom.session import ToolPresentation

if TYPE_CHECKING:
    from loom.session import Session, Workspace

log = logging.getLogger(__name__)

PERMISSION_OPTIONS = [
    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Allow always", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
    PermissionOption(option_id="reject_always", name="Reject always", kind="reject_always"),
]
TRUST_OPTIONS = [
    PermissionOption(option_id="allow_always", name="Trust this project", kind="allow_always"),
    PermissionOption(option_id="reject_always", name="Don't trust", kind="reject_always"),
]
MCP_APPROVAL_OPTIONS = [
    PermissionOption(option_id="allow_always", name="Approve and start", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Not now", kind="reject_once"),
]
MODES = [
    SessionMode(id="normal", name="Normal", description="One model reads, edits and runs."),
    SessionMode(
        id="architect",
        name="Architect",
        description="The strong model plans; the fast model carries out each step.",
    ),
]


def mode_state(session: Session) -> SessionModeState:
    return SessionModeState(current_mode_id=session.get_mode(), available_modes=MODES)


def config_options(
    workspace: Workspace, session: Session
) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
    models = list(dict.fromkeys([session.model, *workspace.known_models()]))
    return [
        SessionConfigOptionSelect(
            type="select",
            id="model",
            name="Model",
            description="Any provider:model-id Loom can reach (configured in loom config).",
            current_value=session.model,
            options=[SessionConfigSelectOption(value=m, name=m) for m in models],
        ),
        SessionConfigOptionSelect(
            type="select",
            id="mode",
            name="Mode",
            current_value=session.get_mode(),
            options=[SessionConfigSelectOption(value=m.id, name=m.name) for m in MODES],
        ),
        SessionConfigOptionSelect(
            type="select",
            id="permission_mode",
            name="Permissions",
            description="default asks as configured; acceptEdits runs file edits unasked; "
            "plan only reads until the plan is approved; bypassPermissions runs every tool "
            "but dangerous commands unasked.",
            current_value=session.permission_mode,
            options=[SessionConfigSelectOption(value=m, name=m) for m in PERMISSION_MODES],
        ),
    ]


class _Raw:
    """An update made outside the event stream (the command list), sent in turn."""

    def __init__(self, update: Any) -> None:
        self.update = update


class LiveSession:
    def __init__(
        self, workspace: Workspace, session: Session, client: Any, capabilities: Any
    ) -> None:
        self.workspace = workspace
        self.session = session
        self.client = client
        self.capabilities = capabilities
        self.id: str = session.id
        self.root = Path(session.project_root)
        self._queue: asyncio.Queue[SessionEvent | _Raw | asyncio.Future[None]] = asyncio.Queue()
        self._sender = asyncio.get_running_loop().create_task(self._send_all())
        self._unsubscribe = self._bind(session)
        self._cancelled = False
        self._rejected: set[tuple[str, str | None]] = set()  # reject_always, this session
        self._edit_before: dict[str, tuple[str, str | None]] = {}  # call -> (path, text)
        self._finished: set[str] = set()  # calls whose last update has been sent
        self._asked = False  # trust and MCP servers: asked before the first turn

    def _bind(self, session: Session) -> Callable[[], None]:
        """Follow `session`'s events (its file tools have the editor's buffers: the spec's
        `editor_files`, `loom.acp.files.editor_files_for`); returns the unsubscribe."""
        self.session = session
        return session.subscribe(self._on_event)

    # -- a turn ----------------------------------------------------------------------------

    async def run_turn(self, text: str) -> StopReason:
        from loom.session import TurnError

        self._cancelled = False
        if not self._asked:
            self._asked = True
            await self._ask_trust()
            trust = self.workspace.trust
            ignored = trust.notice("`loom trust` to change it") if trust is not None else None
            if ignored:  # each setting it leaves out, named once (the REPL's header line)
                self.send_later(updates.agent_text(f"[trust: {ignored}]\n\n"))
            if trust is None or trust.state != "declined":  # a "no" covers its servers
                await self._ask_mcp_approvals()
            loaded = self.session.instructions_header()  # AGENTS.md, ...: the REPL's header
            if loaded:
                self.send_later(updates.agent_text(f"[loom: {loaded}]\n\n"))
        stop: StopReason
        try:
            await self.session.send_message(text)
            stop = "refusal" if self._model_refused() else "end_turn"
        except TurnError as exc:
            if "tool rounds" in str(exc):
                stop = "max_turn_requests"
            elif self._cancelled:
                stop = "cancelled"
            else:
                await self.flush()
                raise RequestError.internal_error({"message": str(exc)}) from exc
        if self._cancelled:
            stop = "cancelled"
        await self.send_usage()
        await self.flush()
        return stop

    def _model_refused(self) -> bool:
        """The turn's last model answer ended in a refusal (a safety stop, a content
        filter): the editor shows it as one, not as a finished turn."""
        from loom.core.messages import AssistantMessage

        messages = self.session.thread.messages
        last = messages[-1] if messages else None
        return isinstance(last, AssistantMessage) and last.stop_reason == "refusal"

    def send_later(self, update: Any) -> None:
        """Queue an update behind the events already waiting (from outside a handler)."""
        self._queue.put_nowait(_Raw(update))

    def cancel(self) -> None:
        self._cancelled = True
        self.session.interrupt()

    async def flush(self) -> None:
        """Wait until every update published so far has been sent."""
        done = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(done)
        with contextlib.suppress(asyncio.CancelledError):
            await done

    async def send_usage(self) -> None:
        from loom.session import session_usage

        u = session_usage(self.session)
        await self.client.session_update(
            session_id=self.id, update=updates.usage(u.context_used, u.context_size, u.cost_usd)
        )

    async def close(self) -> None:
        self._unsubscribe()
        self._sender.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._sender
        with contextlib.suppress(Exception):
            await self.workspace.stop_session(self.id)

    # -- events -> updates -------------------------------------------------------------------

    def _on_event(self, event: SessionEvent) -> None:
        if isinstance(event, ToolExecuting):
            self._remember_before_edit(event)
        self._queue.put_nowait(event)

    def _remember_before_edit(self, event: ToolExecuting) -> None:
        """The file an edit is about to change, read now: the event is published before
        the tool runs, while the update for it is sent later (the file has changed by
        then), and the finished edit's diff needs the text it replaced."""
        shown = self._present(event.tool_name, event.arguments)
        if shown.edits_files and shown.path:
            from loom.session import read_text

            self._edit_before[event.call_id] = (shown.path, read_text(self.root, shown.path))

    async def _send_all(self) -> None:
        while True:
            item = await self._queue.get()
            if isinstance(item, asyncio.Future):
                if not item.done():
                    item.set_result(None)
                continue
            try:
                await self._send(item)
            except Exception:  # a bad update must not stop the ones after it
                log.exception("could not send an update for %s", type(item).__name__)

    async def _send(self, event: SessionEvent | _Raw) -> None:
        if isinstance(event, _Raw):
            await self.client.session_update(session_id=self.id, update=event.update)
            return
        for update in self._updates_for(event):
            await self.client.session_update(session_id=self.id, update=update)
        if isinstance(event, PermissionRequest):
            await self._ask(event)

    def _updates_for(self, event: SessionEvent) -> list[Any]:
        """The `session/update`s for `event` (none for most). Every event type has a
        case: basedpyright fails on one without (`assert_never`)."""
        match event:
            case TextDeltaEvent(text=text):
                return [updates.agent_text(text)] if text else []
            case ThinkingDeltaEvent(text=text):
                return [updates.agent_thought(text)] if text else []
            case NewMessage(message=AssistantMessage() as message):
                return [
                    updates.call_started(
                        c.id,
                        self._present(c.tool_name, c.arguments_json),
                        c.arguments_json,
                        self.root,
                    )
                    for c in message.tool_calls
                ]
            case NewMessage(message=ToolMessage() as message) if (
                message.tool_call_id not in self._finished
            ):
                # a call that never ran (denied, interrupted, refused): its answer ends it
                self._finished.add(message.tool_call_id)
                status = "failed" if message.is_error is not False else "completed"
                content = [updates.text_content(message.content)] if message.content else None
                return [updates.call_progress(message.tool_call_id, status, content)]
            case NewMessage():
                return []  # the person's own message, a tool answer already sent
            case ToolExecuting(call_id=call_id):
                return [updates.call_progress(call_id, "in_progress")]
            case ToolComplete(call_id=call_id, result=result, is_error=failed):
                self._finished.add(call_id)
                content = self._result_content(call_id, result, failed)
                return [
                    updates.call_progress(
                        call_id, "failed" if failed else "completed", content, result[:2000]
                    )
                ]
            case ArchitectPlan(steps=steps):  # before approval; then todo_list updates it
                return [updates.plan(list(steps), {})] if steps else []
            case TodoList(todos=todos):  # todo_write, and an architect plan's steps
                return [updates.todo_plan(todos)]
            case LlmRetry(attempt=attempt, delay_seconds=delay, error=error):
                note = f"\n[retrying in {delay:.0f} s (attempt {attempt}): {error}]\n"
                return [updates.agent_text(note)]
            case SessionError(message=message):
                return [updates.agent_text(f"\n[error: {message}]\n")]
            case ToolProgress(call_id=call_id, message=message):
                if not message:
                    return []
                # a sub-agent's steps (and any tool's progress) inside its call
                return [updates.call_progress(call_id, "in_progress",
                                              [updates.text_content(message)])]  # fmt: skip
            case SubagentStatus(call_id=call_id, status="started") as started:
                note = f"sub-agent thread {started.child_thread_id}"
                return [updates.call_progress(call_id, "in_progress", [updates.text_content(note)])]
            case SubagentStatus():
                return []  # its end is the task call's result
            case Notice(source=source, text=text):
                return [updates.agent_text(f"\n[{source or 'notice'}: {text}]\n")]
            case BackgroundCommandChanged(command_id=cid, command=command, change=change) as bg:
                return [updates.background(cid, command, change, bg.exit_code)]
            case SyncError(message=message):
                log.warning("sync: %s", message)  # not part of the conversation
                return []
            case PermissionRequest():
                return []  # asked by `_send` once the updates before it are out
            case SessionStatus() | ModeChanged() | PermissionModeChanged() | ArchitectStep():
                return []  # the editor follows the turn, its own mode and the todo plan
            case FilesRestored() | ConversationRewound() | ContextCompacted():
                return []
            case DecisionCascade() | SubagentMessage() | TurnComplete():
                return []  # a child's messages stay in its thread; the turn's end: the reply
            case _:
                assert_never(event)

    def _present(self, tool_name: str, args: dict[str, Any]) -> ToolPresentation:
        from loom.session import present_call

        return present_call(self.session.tools, tool_name, args)

    def _result_content(self, call_id: str, result: str, failed: bool) -> list[Any]:
        edited = self._edit_before.pop(call_id, None)
        if edited is not None and not failed:
            from loom.session import read_text

            path, before = edited
            after = read_text(self.root, path)
            if after is not None:
                return [updates.diff_content(self.root, path, before, after)]
        return [updates.text_content(result)] if result else []

    # -- permission --------------------------------------------------------------------------

    async def _ask(self, event: PermissionRequest) -> None:
        key = (event.tool_name, event.tool_path)
        if key in self._rejected:
            self._answer("deny")
            return
        content = self._preview(event)
        try:
            response = await self.client.request_permission(
                session_id=self.id,
                tool_call=updates.permission_call(
                    event.call_id,
                    self._present(event.tool_name, event.arguments),
                    event.arguments,
                    self.root,
                    content,
                ),
                options=PERMISSION_OPTIONS,
            )
        except Exception as exc:  # the editor could not ask: nobody allowed it
            log.warning("permission request failed (%s); denying %s", exc, event.tool_name)
            self._answer("deny")
            return
        outcome = response.outcome
        choice = getattr(outcome, "option_id", None) if outcome.outcome == "selected" else None
        if choice == "allow_once":
            self._answer("allow_once")
        elif choice == "allow_always":
            self._answer("allow_always")  # saved as a grant, exactly as the REPL's `a`
        else:
            if choice == "reject_always":
                self._rejected.add(key)
            self._answer("deny")

    async def _ask_trust(self) -> None:
        """Before the first turn, when the project's files set programs, endpoints or
        permissions never answered for (or changed since): one question listing each.
        Trusted: the session is assembled again with them (it has no message yet)."""
        trust = self.workspace.trust
        if trust is None or not trust.needs_question:
            return None
        call = ToolCallUpdate(
            tool_call_id="trust-project",
            title="Trust this project's settings?",
            kind="execute",
            status="pending",
            content=[updates.text_content("\n".join([
                *trust.question_lines(),
                "Trust lets these run and apply; otherwise Loom ignores them (everything "
                "else works). Later: `loom trust`.",
            ]))],
        )  # fmt: skip
        try:
            response = await self.client.request_permission(
                session_id=self.id, tool_call=call, options=TRUST_OPTIONS
            )
        except Exception as exc:  # the editor could not ask: nothing trusted
            log.warning("trust question failed (%s); the project's settings stay ignored", exc)
            return
        outcome = response.outcome
        choice = getattr(outcome, "option_id", None) if outcome.outcome == "selected" else None
        if choice not in ("allow_always", "reject_always"):
            return  # dismissed: asked again next session
        try:
            self.workspace.answer_trust(choice == "allow_always")
        except OSError as exc:
            log.warning("cannot record the trust answer (%s)", exc)
            return
        if choice == "allow_always":
            self._unsubscribe()
            self._unsubscribe = self._bind(await self.workspace.restart_session(self.id))

    async def _ask_mcp_approvals(self) -> None:
        """The project's own MCP servers start programs the repository chose: before the
        first turn, the editor asks once per server never approved (as the REPL does).
        Approve always: started now and in later sessions; anything else: not started."""
        for ask in self.workspace.mcp_awaiting_approval(self.id):
            call = ToolCallUpdate(
                tool_call_id=f"mcp-approve-{ask.name}",
                title=f"Start the project's MCP server {ask.name!r}",
                kind="execute",
                status="pending",
                content=[
                    updates.text_content(
                        f"{ask.source} defines it to run:\n"
                        + "\n".join(ask.details or (ask.command,))
                        + "\nApprove only if you trust this repository "
                        f"(later: `loom mcp approve {ask.name}`)."
                    )
                ],
            )
            try:
                response = await self.client.request_permission(
                    session_id=self.id, tool_call=call, options=MCP_APPROVAL_OPTIONS
                )
            except Exception as exc:  # the editor could not ask: not started
                log.warning("MCP approval request failed (%s); %s not started", exc, ask.name)
                continue
            outcome = response.outcome
            if outcome.outcome == "selected" and outcome.option_id == "allow_always":
                self.workspace.approve_mcp_server(self.id, ask.name)

    def _answer(self, action: str) -> None:
        from loom.session import NoPendingPermission

        with contextlib.suppress(NoPendingPermission):  # cancelled while asking
            self.session.respond_to_permission(action, {})

    def _preview(self, event: PermissionRequest) -> list[Any] | None:
        from loom.session import read_text

        shown = self._present(event.tool_name, event.arguments)
        path, preview = shown.path, shown.preview
        if shown.edits_files and path and preview is not None:
            before = read_text(self.root, path)
            after = preview.applied_to(before)
            if after is not None:
                return [updates.diff_content(self.root, path, before, after)]
        command = event.arguments.get("command")
        if event.tool_name == "shell" and isinstance(command, str):
            text = f"$ {command}\n(in {self.root})"
            if event.sandboxed is not None:
                fallback = "sandboxed" if event.sandboxed else "NOT sandboxed"
                text += "\n" + (event.sandbox or fallback)
            if event.reason:
                text += f"\n{event.reason}"
            return [updates.text_content(text)]
        if event.reason:
            return [updates.text_content(event.reason)]
        return None
