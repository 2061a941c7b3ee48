"""Session: one conversation with the agent, running the state machine (seed 001 API).

The pure machine (`loom.core.state`) decides; this class performs its actions: it
streams from the provider (publishing text deltas), runs tools with permission checks
and timeouts, records messages in the thread, saves it after every step (through a
coalescing `ThreadSaver`), snapshots git after every tool that can change the tree and
at shutdown, and publishes events on `session:<id>`.

One turn runs at a time (`send_message` calls queue). `interrupt()` cancels the turn:
unfinished tool calls are answered as interrupted and the thread is saved. A crash in
the runtime itself (a bug, not a tool or model error: those become results and error
events) restarts the session from its last saved thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from loom._timeouts import within
from loom.core import state as sm
from loom.core.branches import visible_messages
from loom.core.clock import now_iso
from loom.core.events import (
    LlmRetry,
    ModeChanged,
    NewMessage,
    PermissionModeChanged,
    SessionError,
    SessionEvent,
    SessionStatus,
    TextDeltaEvent,
    TodoList,
    ToolProgress,
    TurnComplete,
    topic_for,
)
from loom.core.ids import new_message_id
from loom.core.images import ImageRef, check_count
from loom.core.messages import (
    AssistantMessage,
    Attachment,
    Message,
    ToolCall,
    Usage,
    UserMessage,
    for_model,
)
from loom.core.secrets import redact_message
from loom.core.thread import Thread
from loom.core.todos import TodoItem
from loom.llm import loop_share
from loom.llm.base import Provider
from loom.session.runtime import background, permission_mode
from loom.session.runtime.auto_commit import after_turn
from loom.session.runtime.bus import DEFAULT_QUEUE_SIZE, EventBus, Subscription
from loom.session.runtime.hook_points import SessionHooks
from loom.session.runtime.llm_call import LlmCaller
from loom.session.runtime.mentions import Expanded, expand_mentions, may_name_files
from loom.session.runtime.options import SessionOptions
from loom.session.runtime.permission_gate import ParentGate, PermissionGate
from loom.session.runtime.ports import TurnError
from loom.session.runtime.prompt import SessionPrompts
from loom.session.runtime.saver import ThreadSaver
from loom.tools.base import ToolRegistry

if TYPE_CHECKING:
    from collections.abc import Coroutine
    from concurrent.futures import Executor

    from loom.session.runtime.context_view import ContextView
    from loom.session.runtime.ports import PolicyPort
    from loom.store.base import ThreadStore

__all__ = ["MODES", "Session", "TurnError"]

log = logging.getLogger(__name__)

RESTART_FLUSH_TIMEOUT = 5.0
MODES = ("normal", "architect")


class Session:
    def __init__(
        self,
        *,
        session_id: str,
        thread: Thread,
        store: ThreadStore,
        provider_factory: Callable[[str], Provider],
        tools: ToolRegistry,
        permissions: PolicyPort | None,
        bus: EventBus,
        model: str,
        project_root: Path,
        options: SessionOptions | None = None,
        save_executor: Executor | None = None,
        gate: ParentGate | None = None,
        before_turn: Sequence[Callable[[], Awaitable[object]]] = (),
    ) -> None:
        """`gate`: a sub-agent's, asking through its parent's (else one of its own over
        `permissions`). `before_turn`: awaited at the start of each turn, inside it (so
        interrupt() stops them): e.g. MCP servers still connecting, whose tools the model
        should see."""
        self.id = session_id
        self.thread = thread
        self.store = store
        self.tools = tools
        self.permissions = permissions
        self.bus = bus
        self.project_root = project_root
        self.options = options or SessionOptions()
        self.topic = topic_for(session_id)
        self.mode = "normal"
        self.effort = self.options.effort  # /effort changes it (set_effort)
        self.restarts = 0
        self.usage = Usage(input_tokens=0, output_tokens=0, cost_usd=0.0)
        self.last_turn: sm.EndTurn | None = None
        self.machine_config = sm.MachineConfig(
            max_retries=self.options.retry.max_retries,
            max_tool_rounds=self.options.max_tool_rounds,
        )
        self.prompts = SessionPrompts(project_root, self.options, lambda: self.thread.messages)
        self.llm = LlmCaller(self, provider_factory)
        self.model = model
        self.llm.check_model(model)
        thread.provider, thread.model = self.llm.split(model)
        self.active_model = model
        self.active_tools = tools
        self._save_executor = save_executor
        self._saver = self._new_saver()
        self._status = "idle"
        self._turn_lock = asyncio.Lock()
        self._turn_task: asyncio.Task[str] | None = None
        self._streamed: list[str] = []  # the running model call's text deltas
        self._turn_end: sm.EndTurn | None = None
        self.busy = False  # a multi-step turn (architect mode) is under way
        self.gate: PermissionGate | ParentGate = gate or PermissionGate(self, permissions)
        self._closed = False
        self.in_git_repo = self.options.git_snapshot and _inside_git_repo(project_root)
        self.state: sm.AgentState = sm.WaitingForUserInput()
        self._pending_restore = self._restore_from(thread)
        self.before_turn = tuple(before_turn)
        self.hooks: SessionHooks | None = None  # [[hooks.EVENT]]: loom.session.runtime.hook_points
        if self.options.lifecycle_hooks:
            self.hooks = SessionHooks(self, self.options.lifecycle_hooks)
        self._stop_continuations = 0  # Stop hooks that made this turn go on
        background.publish_changes(tools, session_id, self.publish)

    async def start(self) -> None:
        """Settle a resumed thread (answer calls left open by a crash) and record the
        starting git state. The thread is first written at the first step that matters."""
        if self.hooks is not None:
            self.hooks.session_start("resume" if self.thread.messages else "startup")
        if self._pending_restore:
            actions, self._pending_restore = self._pending_restore, []
            await self._perform_all(actions)
        if self.in_git_repo:
            await self.git_snapshot()
        await self._saver.flush()

    # -- seed 001 API -----------------------------------------------------------------

    async def send_message(self, text: str, images: list[ImageRef] | None = None) -> str:
        """Run one turn; returns the assistant's final text ("" if interrupted).
        `images`: attached by a face (a file dropped on the web page), besides the ones
        the text names (`@shot.png`, a pasted path). Raises TurnError when the turn ends
        in an error (the session goes on), ImageError/MentionError before anything is
        sent when an attachment cannot be."""
        if not isinstance(text, str) or not text.strip():
            raise ValueError("the message is empty; type something for the agent to do")
        if self._closed:
            raise RuntimeError(f"session {self.id} is stopped; start or resume it again")
        async with self._turn_lock:
            return await self._run_in_task(self._expanded_turn(text, images))

    async def _expanded_turn(self, text: str, images: list[ImageRef] | None) -> str:
        # @path mentions: attached now, so a bad path fails before anything is sent. Inside
        # the turn's task, so interrupt() (Ctrl-C, SIGTERM) stops a long paste's scan too.
        if may_name_files(text):
            expanded = await asyncio.to_thread(expand_mentions, text, self.project_root)
        else:  # a worker thread's round trip per message, for nothing
            expanded = Expanded(text)
        if images:
            expanded.images = [*images, *expanded.images]
            check_count(len(expanded.images))
        if expanded.images:  # refused before anything is sent when the model takes none
            check_model_takes_images(self.model, self.options.image_models)
            await asyncio.to_thread(self._keep_images, expanded.images)
        return await self._turn(
            expanded.text, expanded.files, expanded.images, expanded.attachments
        )

    def _keep_images(self, images: list[Any]) -> None:
        store = self.options.image_store
        if store is None:
            return
        for ref in images:
            store.put(ref)

    async def _run_in_task(self, turn: Any) -> str:
        # The turn runs in its own task: interrupt() cancels it, never the caller.
        task = asyncio.get_running_loop().create_task(turn)
        self._turn_task = task
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            caller = asyncio.current_task()
            if caller is not None and caller.cancelling():
                # The caller itself was cancelled: interrupt, let the thread settle.
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
                raise
            return ""  # interrupted between two machine steps (architect mode)
        finally:
            self._turn_task = None

    @property
    def can_continue(self) -> bool:
        """The last turn stopped before the model answered (a crash, an interrupt while
        it was thinking, tool results it never saw): `continue_turn()` picks it up."""
        return not self._closed and sm.awaits_answer(sm.conversation_of(self.state))

    async def continue_turn(self) -> str:
        """Carry on the stopped turn without a new message (`loom resume`); returns the
        answer, or "" when there is nothing to carry on."""
        if not self.can_continue:
            return ""
        async with self._turn_lock:
            return await self._run_in_task(self._turn(None))

    async def _continue(self) -> str:
        end = await self.drive(sm.Resume())
        self.last_turn = end
        if end.error is not None:
            raise TurnError(end.error.message, origin=str(end.error.origin))
        return end.text

    def instructions_header(self) -> str | None:
        """One line for a face's session header: which instruction files (AGENTS.md,
        CLAUDE.md, LOOM.md, the person's own) were loaded, and any refused; None: none."""
        if self.options.rules is not None:
            return None
        return self.prompts.instructions.header()

    @property
    def todos(self) -> list[TodoItem]:
        """The agent's latest todo list, [] when it keeps none."""
        return list(self.thread.todos or [])

    def update_todos(self, todos: list[TodoItem], source: str = "agent") -> None:
        """A new todo list: kept in the thread (saved) and shown by every face."""
        self.thread.todos = list(todos)
        self.publish(TodoList(session_id=self.id, todos=list(todos), source=source))  # type: ignore[arg-type]
        self._saver.request()

    def get_history(self) -> list[Message]:
        return list(self.thread.messages)

    def update_model(self, model: str) -> None:
        """Use `model` ("provider:model-id") from the next model call on. SetupError
        (a LoomError) for a malformed name, an unknown provider or a missing key."""
        from loom.core.errors import SetupError
        from loom.llm.base import LlmError

        try:
            self.llm.check_model(model)
            self.llm.provider(model)  # built now, so a missing key shows at once
        except (LlmError, ValueError) as exc:
            raise SetupError(str(exc)) from exc
        self.model = self.active_model = model
        self.thread.provider, self.thread.model = self.llm.split(model)
        self._saver.request()

    def set_effort(self, effort: str | None) -> str | None:
        """How hard the model reasons from the next call on ("minimal", "low", "medium",
        "high"; None: its family's default). ValueError names the allowed values.
        Returns the line saying the model in use ignores it, if it cannot reason."""
        from loom.llm.effort import check_effort, ignored_note

        self.effort = check_effort(effort)
        return ignored_note(*self.llm.split(self.active_model), self.effort)

    def set_title(self, title: str) -> None:
        """Rename the thread (the session holds its writer lock, so it saves it)."""
        self.thread.metadata.title = title
        self._saver.request()

    def set_mode(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; use 'normal' or 'architect'")
        if mode == "architect" and mode != self.mode:
            from loom.session.runtime.role_models import check_architect_models

            check_architect_models(self)  # SetupError: no key for its models
        if mode != self.mode:
            self.mode = mode
            self.publish(ModeChanged(session_id=self.id, mode=mode))  # type: ignore[arg-type]

    def get_mode(self) -> str:
        return self.mode

    @property
    def permission_mode(self) -> str:
        """default, acceptEdits, plan or bypassPermissions (loom.permissions.modes)."""
        return permission_mode.mode_of(self.permissions)

    def set_permission_mode(self, mode: str) -> str:
        """Switch the permission mode from the next tool call on (a sub-agent's follows
        its parent's); ValueError for an unknown name."""
        before = self.permission_mode
        after = permission_mode.switch(self.permissions, mode)
        if after != before:
            self.publish(PermissionModeChanged(session_id=self.id, permission_mode=after))
        return after

    async def context_view(self) -> ContextView:
        """Where the context window goes on the next call (`/context` in every face)."""
        return await self.llm.preview(sm.to_send(sm.conversation_of(self.state)))

    def background_commands(self) -> list[background.BackgroundView]:
        """The background commands this session started (shell with background: true)."""
        return background.views(self.tools)

    async def kill_background(self, command_id: str) -> str:
        """End background command `command_id` and its process group; a line saying so.
        ValueError for an id this session does not have."""
        registry = background.registry_of(self.tools)
        if registry is None or command_id not in registry.commands:
            raise ValueError(f"no background command {command_id!r} in this session")
        return await registry.kill(command_id)

    async def approve_plan(self, mode: str = "default") -> str:
        """The person approves the plan (the todo list): leave plan mode for `mode` and
        carry it out; returns the answer. ValueError when the session is not planning."""
        if self.permission_mode != "plan":
            raise ValueError("there is no plan to approve: the session is not in plan mode")
        if mode == "plan":
            raise ValueError("approving a plan leaves plan mode; choose another mode")
        self.set_permission_mode(mode)
        return await self.send_message(permission_mode.approval_message(self.todos))

    def get_status(self) -> str:
        return self._status

    @overload
    def subscribe(self, callback: None = None, *, maxsize: int = ...) -> Subscription: ...
    @overload
    def subscribe(
        self, callback: Callable[[Any], None], *, maxsize: int = ...
    ) -> Callable[[], None]: ...
    def subscribe(
        self, callback: Callable[[Any], None] | None = None, *, maxsize: int = DEFAULT_QUEUE_SIZE
    ) -> Subscription | Callable[[], None]:
        """Events of this session. Without a callback: a bounded-queue Subscription to
        iterate (`async for event in sub`). With one: `callback(event)` is called as each
        event is published, and an `unsubscribe()` function is returned."""
        if callback is not None:
            return self.bus.listen(self.topic, callback)
        return self.bus.subscribe(self.topic, maxsize=maxsize)

    def respond_to_permission(self, action: str, meta: dict[str, Any] | None = None) -> None:
        """Answer the pending permission request: allow_once, allow_always or deny.
        `meta` may carry `scope` (what an allow_always covers, e.g. a folder "src/").
        Raises ValueError for another answer, NoPendingPermission when none is waiting."""
        self.gate.respond(action, meta)

    @property
    def pending_permission(self) -> ToolCall | None:
        return self.gate.pending

    def interrupt(self) -> bool:
        """Cancel the running turn (Ctrl-C). Returns False when nothing was running."""
        task = self._turn_task
        if task is None or task.done():
            return False
        task.cancel()
        return True

    @property
    def never_answered(self) -> bool:
        """Its last turn failed and the thread holds no answer at all (a refused
        connection, a wrong URL on the first call): not worth keeping as a thread. An
        interrupted first turn is kept (/continue picks it up), and so is a sub-agent's."""
        end = self.last_turn
        return (
            end is not None
            and end.error is not None
            and self.thread.parent_thread_id is None
            and not any(m.role in ("assistant", "tool") for m in self.thread.messages)
        )

    def count_usage(self, usage: Usage) -> None:
        """Add one model response's tokens and cost to the session's total (`usage`):
        its own calls, and its sub-agents' (the person pays for both). A response of
        unknown price makes the total's cost unknown from then on."""
        total = self.usage
        total.input_tokens += usage.input_tokens
        total.output_tokens += usage.output_tokens
        if usage.cache_read_tokens:
            total.cache_read_tokens = (total.cache_read_tokens or 0) + usage.cache_read_tokens
        if usage.cache_write_tokens:
            total.cache_write_tokens = (total.cache_write_tokens or 0) + usage.cache_write_tokens
        if usage.reasoning_tokens:
            total.reasoning_tokens = (total.reasoning_tokens or 0) + usage.reasoning_tokens
        if usage.cost_usd is None or total.cost_usd is None:
            total.cost_usd = None
        else:
            total.cost_usd += usage.cost_usd

    @property
    def keeps_thread(self) -> bool:
        """Whether its thread is kept when it stops (`loom resume` finds it): something
        was said, and answered or worth continuing. A message refused before anything was
        sent (a missing @file, an image for a model that takes none) leaves none."""
        return bool(self.thread.messages) and not self.never_answered

    async def stop(self) -> None:
        """Finish: interrupt any turn, answer open calls, snapshot git, save, release."""
        if self._closed:
            return
        if self.interrupt():
            async with self._turn_lock:
                pass
        self._closed = True
        registry = background.registry_of(self.tools)
        if registry is not None:  # now, while faces still listen: each hears "killed"
            await registry.close()
        self.state, actions = sm.transition(self.state, sm.Shutdown(), self.machine_config)
        await self._perform_all(actions)  # answers open calls, saves
        if self.in_git_repo:
            await self.git_snapshot()
            self._save_state()
        await self._saver.flush()
        self._set_status("idle")
        if self.hooks is not None:
            await self.hooks.session_end("exit")

    # -- one turn ---------------------------------------------------------------------

    async def _turn(
        self,
        text: str | None,
        mentions: list[str] | None = None,
        images: list[Any] | None = None,
        attachments: list[Attachment] | None = None,
    ) -> str:
        """One turn from `text` (None: carry on the stopped one), crash-supervised."""
        for hook in self.before_turn:
            await hook()
        if self.hooks is not None:  # SessionStart's context, once its hooks are done
            self.prompts.hook_context = await self.hooks.start_context()
        if self._pending_restore:
            await self.start()
        try:
            if text is None:
                return await self._continue()
            if self.mode == "architect":
                from loom.session.runtime.architect import run_architect_turn

                words = UserMessage(content=text, attachments=attachments or None)
                return await run_architect_turn(self, for_model(words).content)
            notes = background.finished_notes(self.tools)
            if self.permission_mode == "plan":
                notes.append(permission_mode.plan_note())
            attached = [*(attachments or ()), *notes]
            message = UserMessage(content=text, images=images or None, attachments=attached or None)
            if mentions:
                message.mentions = mentions  # type: ignore[attr-defined]  # repo map focus
            return await self.run_user_turn(message)
        except (asyncio.CancelledError, TurnError):
            raise
        except Exception as exc:  # a bug in the runtime: restart from the last save
            log.exception("session %s crashed", self.id)
            await self.restart(exc)
            raise TurnError(
                f"the turn failed ({type(exc).__name__}: {exc}); the session was restarted from "
                "its last saved state, so you can send the message again",
                origin="Session",
            ) from exc

    async def run_user_turn(self, message: UserMessage) -> str:
        """Drive the machine from a user message to the end of the turn."""
        if message.id is None:
            message.id = new_message_id()
            message.created_at = now_iso()
        if self.hooks is not None:
            verdict = await self.hooks.user_prompt(message.content)
            if verdict is not None and (verdict.blocked or verdict.stop is not None):
                why = verdict.reason or verdict.stop or "no reason given"
                raise TurnError(
                    f"a UserPromptSubmit hook blocked this message: {why}", origin="Hook"
                )
            if verdict is not None and verdict.context_text:  # shown as the hook's, not typed
                added = Attachment(
                    kind="hook",
                    label="UserPromptSubmit hook",
                    text=f"[UserPromptSubmit hook]\n{verdict.context_text}",
                )
                message.attachments = [*(message.attachments or []), added]
        self._stop_continuations = 0
        end = await self.drive(sm.UserInput(message))
        self.last_turn = end
        if end.error is not None:
            raise TurnError(end.error.message, origin=str(end.error.origin))
        return end.text

    async def drive(self, first: sm.AgentEvent) -> sm.EndTurn:
        """Feed `first` and every follow-up event until the machine ends the turn."""
        events: deque[sm.AgentEvent] = deque([first])
        self._turn_end = None
        clock = loop_share.clock
        since = clock()
        try:
            while events:
                events.extend(await self._apply(events.popleft()))
                # Let other sessions and the saver run even when the model and tools
                # answer without ever suspending (scripted providers, cached results):
                # once the turn has held the loop for a slice. (A yield after every
                # event cost a loop iteration each, ~10 per turn, for nothing.)
                if clock() - since >= loop_share.slice_s():
                    await asyncio.sleep(0)
                    since = clock()
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            self.gate.cancel()
            # Answers what was open, keeps the words of an answer cut off while it
            # streamed, and saves; a no-op when the turn had just ended.
            await self._apply(sm.Interrupted(partial=self._cut_off_answer()))
        if self._turn_end is None and not isinstance(
            self.state, sm.WaitingForUserInput | sm.Error
        ):  # a bug: treat as a crash, so the session restarts from its last save
            raise RuntimeError(f"the agent loop stalled in {type(self.state).__name__}")
        return self._turn_end or sm.EndTurn("")

    def _cut_off_answer(self) -> AssistantMessage | None:
        """The text the model had streamed when the turn was interrupted, as an
        assistant message marked interrupted (None when nothing was shown)."""
        text = "".join(self._streamed)
        if not text.strip():
            return None
        return AssistantMessage(
            content=text,
            model=self.active_model,
            stop_reason="interrupted",
            id=new_message_id(),
            created_at=now_iso(),
        )

    async def _apply(self, event: sm.AgentEvent) -> list[Any]:
        self.state, actions = sm.transition(self.state, event, self.machine_config)
        return await self._perform_all(actions, status=sm.status_of(self.state))

    def apply_now(self, event: sm.AgentEvent) -> None:
        """Apply an event whose actions need no waiting (stream started, tool progress,
        a failed save)."""
        self.state, actions = sm.transition(self.state, event, self.machine_config)
        for action in actions:
            pending = self._interpret(action)
            if pending is not None:  # a bug in the machine: log it, never block here
                pending.close()
                log.error("%s after %s needs waiting; ignored", type(action).__name__, event)
        self._set_status(sm.status_of(self.state))

    async def _perform_all(
        self, actions: list[sm.AgentAction], *, status: str | None = None
    ) -> list[Any]:
        """Carry out `actions` in order; returns the events they produced to feed next.
        The new `status` is published once the messages the step records are out, as
        Claude Code orders them (the call's message, then the tool runs; the last
        answer, then idle), and before anything is awaited."""
        follow: list[Any] = []
        for action in actions:
            pending = self._interpret(action)
            if pending is not None and status is not None:
                self._set_status(status)
                status = None
            result = await pending if pending is not None else None
            if isinstance(result, list):  # a batch of calls: their outcomes, in order
                follow.extend(result)
            elif result is not None:
                follow.append(result)
        if status is not None:
            self._set_status(status)
        return follow

    def _interpret(self, action: sm.AgentAction) -> Coroutine[Any, Any, Any] | None:
        """The one interpreter of the machine's actions. Immediate ones are done here;
        one that waits (a model call, a tool, a retry timer, hooks, a flush) comes back
        as a coroutine for the caller to await, whose result is the next event."""
        match action:
            case sm.RecordMessage(message=message):
                self._record(message)
            case sm.SaveThread():
                self._save_state()
            case sm.PublishProgress():
                self._publish_progress(action)
            case sm.ReportError(error=error):
                self._report(error)
            case sm.AmendLastMessage(message=message):
                if self.thread.messages and _same_slot(self.thread.messages[-1], message):
                    self.thread.messages[-1] = message
            case sm.EndTurn():
                self._turn_end = action
                return self._end_turn(action)
            case sm.CallLlm():
                self._streamed = []  # this call's words, kept if it is interrupted
                return self.llm.call(sm.to_send(action.conversation))
            case sm.ExecuteTool(call=call):
                from loom.session.runtime.tool_runner import execute_call  # at the first call

                return execute_call(self, self.gate, call)
            case sm.ExecuteTools(calls=calls):
                from loom.session.runtime.tool_runner import execute_calls

                return execute_calls(self, self.gate, calls)
            case sm.ScheduleRetry(attempt=attempt, error=error):
                return self._retry_later(attempt, error)
            case sm.RunPostToolsHook():
                return self._run_post_tools_hooks()
            case sm.WaitForInput():
                return self._flushed(None)
        return None

    def _save_state(self) -> None:
        """Record the machine's state in the thread and save it. A stopped session is
        saved as waiting for the user (that is where resuming it starts), and a thread
        nobody spoke to is never written."""
        state = sm.WaitingForUserInput() if isinstance(self.state, sm.ShuttingDown) else self.state
        self.thread.agent_state = sm.snapshot(state)
        if self.thread.messages:
            self._saver.request()

    async def _retry_later(self, attempt: int, error: sm.AgentError) -> sm.AgentEvent:
        delay = self.options.retry.delay(attempt, self.llm.last_exception)
        self.publish(
            LlmRetry(session_id=self.id, attempt=attempt, delay_seconds=delay, error=error.message)
        )
        await asyncio.sleep(delay)
        return sm.RetryTimerFired()

    async def _run_post_tools_hooks(self) -> sm.AgentEvent:
        notes = []
        for hook in self.options.post_tools_hooks:
            outcome = hook(self)
            if asyncio.iscoroutine(outcome):
                outcome = await outcome
            if isinstance(outcome, str) and outcome:
                notes.append(outcome)  # for the model, with the round's tool results
        return sm.PostToolsHookDone("\n\n".join(notes))

    async def _end_turn(self, action: sm.EndTurn) -> sm.AgentEvent | None:
        ended_well = action.error is None and not action.interrupted
        if self.hooks is not None and ended_well and not self.busy:
            goes_on = await self.hooks.stop(action.text, self._stop_continuations)
            if goes_on is not None:  # a Stop hook blocked: the turn goes on with its text
                self._stop_continuations += 1
                text = f"[Stop hook] You are not done yet: {goes_on}"
                return sm.UserInput(
                    UserMessage(content=text, id=new_message_id(), created_at=now_iso())
                )
        await after_turn(self)  # the end-of-turn checkpoint, then [git] auto_commit
        self.publish(TurnComplete(session_id=self.id, text=action.text))
        return None

    async def _flushed(self, result: Any) -> Any:
        await self._saver.flush()
        return result

    # -- tools ------------------------------------------------------------------------

    # -- thread, events, status -------------------------------------------------------

    def _record(self, message: Message) -> None:
        redact_message(message, self.options.secrets)  # before it is saved, sent or synced
        self.thread.append(message)
        self.publish(NewMessage(session_id=self.id, message=message))

    def _report(self, error: sm.AgentError) -> None:
        origin: Any = str(error.origin)
        self.publish(SessionError(session_id=self.id, origin=origin, message=error.message))

    def publish(self, event: SessionEvent) -> None:
        if type(event) is TextDeltaEvent:
            self._streamed.append(event.text)
        self.bus.publish(self.topic, event)

    def _publish_progress(self, action: sm.PublishProgress) -> None:
        self.publish(
            ToolProgress(
                session_id=self.id,
                tool_name=action.call.tool_name,
                call_id=action.call.id,
                fraction=action.progress.fraction,
                message=action.progress.message,
            )
        )

    def _set_status(self, status: str) -> None:
        if self.busy and status == "idle":
            status = "thinking"  # between the machine turns of one architect turn
        if status != self._status:
            self._status = status
            self.publish(SessionStatus(session_id=self.id, status=status))  # type: ignore[arg-type]

    def settle_status(self) -> None:
        self._set_status(sm.status_of(self.state))

    def _new_saver(self) -> ThreadSaver:
        def on_error(exc: BaseException) -> None:
            message = (
                f"{exc} (the conversation is kept in memory; saving is retried on the next step)"
            )
            self.apply_now(sm.IoFailed(message))

        return ThreadSaver(
            lambda: self.thread, self.store.save, on_error=on_error, executor=self._save_executor
        )

    def request_save(self) -> None:
        self._saver.request()

    async def flush(self) -> None:
        """Wait until the thread as it is now is on disk."""
        await self._saver.flush()

    async def git_snapshot(self) -> None:
        from loom.gitmeta import snapshot_git_state

        try:
            await asyncio.to_thread(snapshot_git_state, self.thread, self.project_root)
        except Exception as exc:  # git trouble must not stop the agent
            log.warning("git snapshot failed: %s", exc)

    # -- restart ----------------------------------------------------------------------

    def _restore_from(self, thread: Thread) -> list[sm.AgentAction]:
        # rewound-away turns stay in the thread as a side branch; the model sees the rest
        self.state, actions = sm.restore(thread.agent_state, visible_messages(thread))
        # the thread already holds the saved messages; the state holds them + answers
        return actions

    async def restart(self, cause: BaseException) -> None:
        """Rebuild the session from its last saved thread (the GenServer restart)."""
        self.restarts += 1
        self.gate.cancel()
        # Land what was recorded before the crash (history is append-only, so it is a
        # valid prefix), then rebuild from disk as a fresh process would.
        with contextlib.suppress(Exception):
            await within(self._saver.flush(), RESTART_FLUSH_TIMEOUT)
        self._saver.cancel()
        saved = await asyncio.to_thread(self.store.load, self.thread.id)
        if saved is not None:
            self.thread = saved
        else:  # never saved: keep what we have, minus nothing (history is append-only)
            pass
        self._saver = self._new_saver()
        await self._perform_all(self._restore_from(self.thread))
        self._set_status("idle")
        self.publish(
            SessionError(
                session_id=self.id,
                origin="Session",
                message=f"session crashed ({type(cause).__name__}: {cause}); restarted from its "
                "last saved thread",
            )
        )
        await self._saver.flush()


def check_model_takes_images(model: str, told: dict[str, bool] | None = None) -> None:
    """ImageError, saying so plainly, when `model` does not take images (`told`: config
    `[models."provider:model"] images`)."""
    from loom.core.images import ImageError
    from loom.llm.catalog import takes_images
    from loom.llm.registry import parse_model_name

    provider, model_id = parse_model_name(model)
    if not takes_images(provider, model_id, told):
        raise ImageError(
            f"{model} does not take images (as far as Loom's model catalog knows), so the "
            "image was not sent. Switch to a model that does (/model, --model, e.g. "
            "anthropic:claude-sonnet-4-6), or describe what the image shows in words; if "
            f'it does take images, say so in your config: [models."{provider}:{model_id}"] '
            "images = true"
        )


def _same_slot(old: Any, new: Any) -> bool:
    return getattr(old, "tool_call_id", None) == getattr(new, "tool_call_id", object())


def _inside_git_repo(path: Path) -> bool:
    return any((folder / ".git").exists() for folder in (path, *path.parents))
