"""Live sessions as the page sees them: each bus event becomes a numbered payload that
every open tab receives, and a tab that (re)connects gets exactly what it missed.

A page is rendered from the thread (plus the text streamed since the last message, the
running tools and an open permission request) together with the sequence number of
the last event that render includes. Its EventSource then asks for everything after
that number: the hub replays it from a bounded log and continues live. Render, log and
fan-out all happen on the event loop without awaiting in between, so nothing is
duplicated or lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from loom.web import payloads
from loom.web.cards import disk_diff

if TYPE_CHECKING:
    from loom.core.events import PermissionRequest, SessionEvent
    from loom.core.messages import ToolCall
    from loom.session import Session

log = logging.getLogger(__name__)

LOG_SIZE = 20_000  # events kept per session for tabs that reconnect
QUEUE_SIZE = 20_000
# The sidebar's live-session list goes out at most this often. 20 sessions starting a
# turn together flipped badges over ~30 loop turns: each rendered the list on the loop
# and every tab re-parsed it, and the streamed words behind them waited (the tail of
# the bus -> DOM latency, bench/web_bench.py). A lone change still goes out at once.
SIDEBAR_INTERVAL_S = 0.25
BADGES = {"idle": "Ready", "thinking": "Thinking", "executing_tool": "Running a tool"}


class Client:
    """One open EventSource: a queue of serialized payloads."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[tuple[int | None, str]] = asyncio.Queue(QUEUE_SIZE)
        self.overflowed = False

    def offer(self, seq: int | None, data: str) -> None:
        try:
            self.queue.put_nowait((seq, data))
        except asyncio.QueueFull:  # a stalled tab: tell it to reload instead of lying
            self.overflowed = True


class LiveSession:
    def __init__(self, session: Session, hub: Hub) -> None:
        self.session = session
        self.hub = hub
        self.id: str = session.id
        # a sub-agent's: the session (= thread) that started it; listed under it
        self.parent_id: str | None = session.thread.parent_thread_id
        self.log: deque[tuple[int, str]] = deque(maxlen=LOG_SIZE)
        self.clients: set[Client] = set()
        self._partial: list[str] = []  # text streamed since the last assistant message
        self._thinking: list[str] = []  # and the reasoning streamed before it
        self.running: dict[str, tuple[str, float]] = {}  # call id -> (tool, started)
        self.durations: dict[str, float] = {}
        self.diffs: dict[str, Any] = {}  # call id -> the edit's diff, taken before it ran
        self.tools: Any = session.tools  # its ToolRegistry: how each tool shows its calls
        self.permission: PermissionRequest | None = None  # the open question
        self.status = "idle"
        # the panel: an architect plan and its steps' states, or the agent's todo list
        self.plan: dict[str, Any] | None = todo_panel(session.todos) if session.todos else None
        self.notices: list[dict[str, Any]] = []
        self.mcp_asks: list[Any] = []  # the project's MCP servers awaiting approval
        self.tasks: set[asyncio.Task[Any]] = set()
        self._unsubscribe: Callable[[], None] = session.subscribe(self._on_event)

    # -- what a page shows ------------------------------------------------------------

    @property
    def badge(self) -> tuple[str, str]:
        """(label, kind) for the sidebar: Waiting for permission, the running tool, ..."""
        if self.permission is not None:
            return "Waiting for permission", "ask"
        if self.running:
            tool = next(iter(self.running.values()))[0]
            return f"Running {tool}", "busy"
        if self.status != "idle":
            return BADGES.get(self.status, self.status), "busy"
        return "Ready", "ready"

    @property
    def partial(self) -> str:
        """The text streamed since the last assistant message (kept as parts: joining
        on every delta would copy a long answer once per word)."""
        return "".join(self._partial)

    @property
    def thinking(self) -> str:
        """The reasoning streamed since the last assistant message (a reload mid-answer
        shows it folded, as the live page did)."""
        return "".join(self._thinking)

    @property
    def last_seq(self) -> int:
        return self.log[-1][0] if self.log else self.hub.seq_floor

    def attach(self, client: Client, after: int) -> tuple[list[tuple[int, str]], bool]:
        """Follow this session from event `after` on: the events to replay first, and
        False when some of them are no longer kept (the tab must reload)."""
        complete = not self.log or self.log[0][0] <= after + 1 or after >= self.last_seq
        backlog = [(seq, data) for seq, data in self.log if seq > after]
        self.clients.add(client)
        return backlog, complete

    def detach(self, client: Client) -> None:
        self.clients.discard(client)

    # -- actions ----------------------------------------------------------------------

    def send(self, text: str, images: list[Any] | None = None) -> None:
        task = asyncio.get_running_loop().create_task(self._send(text, images))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _send(self, text: str, images: list[Any] | None = None) -> None:
        from loom.session import BadInput

        try:
            await self.session.send_message(text, images or None)
        except asyncio.CancelledError:
            raise
        except BadInput as exc:  # the person's input (an image the model cannot take,
            self.notice("error", str(exc))  # a missing @file): said plainly, nothing sent
        except Exception as exc:  # TurnError: the session already published the error
            if type(exc).__name__ != "TurnError":
                log.exception("turn failed in session %s", self.id)
                self.notice("error", f"The turn failed: {exc}")

    def answered(self, action: str) -> None:
        """The person answered the permission request: every tab closes its dialog."""
        self.permission = None
        self._emit({"type": "permission_answered", "action": action})

    def notice(self, level: str, text: str) -> None:
        self._emit({"type": "notice", "level": level, "text": text})

    def ask_mcp(self, asks: list[Any]) -> None:
        """Show (every tab) the banner of project MCP servers awaiting approval."""
        from loom.web.views import fragment

        self.mcp_asks = list(asks)
        self._emit({"type": "mcp_asks", "html": str(fragment("mcp_asks", self.mcp_asks))})

    def emit_trust_answered(self, message: str) -> None:
        """The project's trust question was answered (in any tab): drop its banner."""
        self._emit({"type": "trust_answered"})
        self.notice("info", message)

    def close(self) -> None:
        self._emit({"type": "ended"})
        self._unsubscribe()
        for task in self.tasks:
            task.cancel()

    # -- events -----------------------------------------------------------------------

    def _on_event(self, event: SessionEvent) -> None:
        try:
            payload = self._track(event)
        except Exception:  # never let a rendering bug reach the session
            log.exception("could not show an event of session %s", self.id)
            return
        if payload is not None:
            self._emit(payload)

    def _emit(self, payload: dict[str, Any]) -> None:
        seq = self.hub.next_seq()
        payload["seq"] = seq
        payload.setdefault("t", time.time() * 1000)
        data = json.dumps(payload, ensure_ascii=False)
        self.log.append((seq, data))
        if payload["type"] == "notice":
            at = len(self.session.thread.messages)  # where a fresh render puts it
            shown = {"level": payload["level"], "text": payload["text"], "at": at}
            self.notices = [*self.notices[-19:], shown]
        for client in list(self.clients):
            client.offer(seq, data)
        if payload["type"] in BADGE_EVENTS:
            self.hub.badges_changed()

    def _track(self, event: SessionEvent) -> dict[str, Any] | None:
        """Update what a fresh render would show, and say what a tab must do."""

        if event.type == "text_delta":
            self._partial.append(event.text)
        elif event.type == "thinking_delta":
            self._thinking.append(event.text)
        elif event.type == "new_message" and event.message.role == "assistant":
            self._partial, self._thinking = [], []
        elif event.type == "session_status":
            self.status = event.status
            if event.status == "idle":  # an interrupted turn completes no tool
                self.running.clear()
                self._drop_answered_permission()
        elif event.type == "tool_executing":
            self.running[event.call_id] = (event.tool_name, time.monotonic())
            if event.call_id not in self.diffs:  # auto-approved edits: the file as it is now
                self.diffs[event.call_id] = disk_diff(
                    self.session.project_root, event.tool_name, event.arguments, self.tools
                )
            if self.permission is not None and self.permission.call_id == event.call_id:
                self.permission = None
        elif event.type == "tool_complete":
            started = self.running.pop(event.call_id, None)
            if started is not None:
                self.durations[event.call_id] = time.monotonic() - started[1]
        elif event.type == "permission_request":
            self.permission = event
            self.diffs[event.call_id] = disk_diff(
                self.session.project_root, event.tool_name, event.arguments, self.tools
            )
        elif event.type == "architect_plan":
            self.plan = {"summary": event.summary, "steps": [dict(s) for s in event.steps]}
            for step in self.plan["steps"]:
                step.setdefault("status", "planned")
        elif event.type == "todo_list" and event.source == "agent":  # architect: the steps above
            self.plan = todo_panel(event.todos)
        elif event.type == "architect_step" and self.plan is not None:
            steps = self.plan["steps"]
            if 0 < event.index <= len(steps):
                steps[event.index - 1]["status"] = event.status
        if event.type in ("tool_complete", "turn_complete", "error") or (
            event.type == "new_message" and event.message.role == "tool"
        ):
            self._drop_answered_permission()
        return payloads.payload_for(self, event)

    def _drop_answered_permission(self) -> None:
        if self.permission is not None and pending_permission(self.session) is None:
            self.permission = None


BADGE_EVENTS = frozenset(  # payload types after which a sidebar badge may read differently
    {
        "status",
        "tool_running",
        "tool_done",
        "permission",
        "permission_answered",
        "turn_done",
        "message",
        "ended",
        "subagent",
    }
)


def pending_permission(session: Session) -> ToolCall | None:
    """The tool call waiting for a person's answer, or None."""
    return session.pending_permission


class Hub:
    """Every live session of this `loom web`, and the tabs that watch the sidebar."""

    def __init__(self) -> None:
        self.sessions: dict[str, LiveSession] = {}
        self.sidebar_clients: set[Client] = set()
        self._seq = 0
        self.seq_floor = 0
        self._badges_dirty = False
        self._sidebar_at = float("-inf")  # the loop's time of the last sidebar push
        self._sidebar_sent: str | None = None  # what it pushed
        self.render_sidebar: Callable[[], str] | None = None

    def next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def add(self, session: Session) -> LiveSession:
        live = self.sessions.get(session.id)
        if live is None:
            live = LiveSession(session, self)
            self.sessions[session.id] = live
            self.badges_changed()
        return live

    def remove(self, session_id: str) -> None:
        live = self.sessions.pop(session_id, None)
        if live is not None:
            live.close()
            self.badges_changed()

    def watch_sidebar(self, client: Client) -> None:
        """A tab follows the sidebar from now on (its page was rendered just before)."""
        self.sidebar_clients.add(client)
        self._sidebar_sent = None  # its page may show a list we never pushed

    def badges_changed(self) -> None:
        """Coalesce sidebar refreshes: at most one per loop iteration, and after a push,
        one more at the end of SIDEBAR_INTERVAL_S carrying whatever changed meanwhile."""
        if self._badges_dirty or not self.sidebar_clients:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._badges_dirty = True
        wait = self._sidebar_at + SIDEBAR_INTERVAL_S - loop.time()
        if wait > 0:
            loop.call_later(wait, self._push_sidebar)
        else:
            loop.call_soon(self._push_sidebar)

    def _push_sidebar(self) -> None:
        self._badges_dirty = False
        if self.render_sidebar is None:
            return
        with contextlib.suppress(RuntimeError):
            self._sidebar_at = asyncio.get_running_loop().time()
        html = self.render_sidebar()
        if html == self._sidebar_sent:  # e.g. Thinking -> a tool -> Thinking: no change
            return
        self._sidebar_sent = html
        data = json.dumps({"type": "live_sessions", "html": html})
        for client in list(self.sidebar_clients):
            client.offer(None, data)


_TODO_STATES = {"pending": "planned", "in_progress": "started", "completed": "completed"}


def todo_panel(todos: list[Any]) -> dict[str, Any]:
    """The agent's todo list in the plan panel's shape (its step states and styles)."""
    done = sum(item.status == "completed" for item in todos)
    steps = [{"description": item.content, "status": _TODO_STATES[item.status]} for item in todos]
    return {"summary": f"Todo ({done}/{len(todos)} done)", "steps": steps}
