"""See it working: a spinner line while the model thinks or a tool runs (with elapsed
time), the retry countdown, and the running token/cost count (also in the prompt's
bottom toolbar).

The spinner is one line redrawn in place (`\\r`, erase line) while nothing else is being
printed; the renderer calls `clear()` before it writes, so output never mixes with it.
It is drawn only when stdout is a terminal.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from typing import TYPE_CHECKING, Any

from loom.core.text import visible

if TYPE_CHECKING:
    from loom.core.events import SessionEvent
    from loom.session import Session

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
TICK = 0.1  # seconds between frames


def tokens_text(count: int) -> str:
    return f"{count / 1000:.1f}k" if count >= 10_000 else f"{count:,}"


def cost_text(cost: float | None) -> str:
    """`$0.0421`, or `cost unknown` (a model with no known price: never `$0`)."""
    return "cost unknown" if cost is None else f"${cost:.4f}"


def usage_in_text(usage: Any) -> str:
    """`120,310 tokens in (cache 93%: 111,800 read, 5,210 written)`: a session's input and
    what the provider's prompt cache did with it."""
    from loom.core.usage import UsageTotals

    totals = UsageTotals()
    totals.add(usage)
    text = f"{totals.prompt_tokens:,} tokens in"
    if totals.cache_read_tokens or totals.cache_write_tokens:
        share = totals.cache_text() or "cache 0%"
        text += (
            f" ({share}: {totals.cache_read_tokens:,} read, {totals.cache_write_tokens:,} written)"
        )
    return text


def usage_text(session: Session) -> str:
    """`12.3k tokens · $0.0421` for the session so far."""
    from loom.core.usage import UsageTotals
    from loom.session import session_cost

    totals = UsageTotals()
    totals.add(session.usage)
    total = totals.prompt_tokens + totals.output_tokens
    text = f"{tokens_text(total)} tokens · {cost_text(session_cost(session))}"
    cache = totals.cache_text()  # how much of the input the provider's cache served
    return f"{text} · {cache}" if cache else text


class Status:
    def __init__(self, repl: Any, stream: Any = None) -> None:
        self.repl = repl
        self.stream = stream or sys.stdout
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.phase = "idle"  # idle | thinking | tool | retry | writing
        self.since = time.monotonic()
        self.tool = ""
        self.retry_until = 0.0
        self.retry_note = ""
        self.progress = ""  # the running tool's latest progress message
        self._drawn = False
        self._paused = 0
        self._task: asyncio.Task[None] | None = None
        self._frame = 0

    # -- what is happening ---------------------------------------------------------------

    def observe(self, event: SessionEvent) -> None:
        now = time.monotonic()
        if event.type == "session_status":
            if event.status == "thinking" and self.phase != "thinking":
                self.phase, self.since = "thinking", now
            elif event.status == "idle":
                self.phase = "idle"
        elif event.type == "tool_executing":  # (an MCP server names its tools)
            self.phase, self.since, self.tool = "tool", now, visible(event.tool_name)
            self.progress = ""
        elif event.type == "tool_progress":  # a tool's words: shown, never acted on
            self.progress = visible(" ".join(str(event.message or "").split())[:80])
        elif event.type == "tool_complete":
            self.phase, self.since = "thinking", now
        elif event.type == "llm_retry":
            self.phase = "retry"
            self.retry_until = now + float(event.delay_seconds)
            self.retry_note = f"attempt {event.attempt}"
        elif event.type == "text_delta" and self.phase != "writing":
            self.phase, self.since = "writing", now
        elif event.type == "new_message" and event.message.role == "assistant":
            self.phase, self.since = "thinking", now

    def line(self) -> str:
        """The spinner line's text for the current phase ("" when idle)."""
        now = time.monotonic()
        if self.phase == "thinking":
            what = f"thinking {now - self.since:.1f}s"
        elif self.phase == "tool":
            what = f"running {self.tool} {now - self.since:.1f}s"
            if self.progress:
                what += f" ({self.progress})"
        elif self.phase == "writing":
            what = f"writing {now - self.since:.1f}s"
        elif self.phase == "retry":
            left = max(self.retry_until - now, 0.0)
            what = f"retrying in {left:.0f}s ({self.retry_note})"
        else:
            return ""
        usage = self._usage()
        return f"{what} · {usage} · Ctrl-C to interrupt" if usage else what

    def toolbar(self) -> str:
        """The bottom toolbar of the prompt: model, thread, tokens and cost."""
        starter = self.repl.starter
        if not starter.ready:
            return " starting the session…" if not starter.done else " the session did not start"
        session = self.repl.session
        mode = session.permission_mode
        shown = f"{mode} (Shift-Tab)" if mode != "default" else ""
        running = sum(1 for job in session.background_commands() if job.state == "running")
        shells = f"{running} shell{'s' if running != 1 else ''} (/shells)" if running else ""
        parts = [visible(session.model), session.thread.id[:14] + "…", self._usage(), shown, shells]
        return " " + " · ".join(p for p in parts if p)

    def _usage(self) -> str:
        session = self.repl.session if self.repl.starter.ready else None
        return usage_text(session) if session is not None else ""

    # -- drawing ---------------------------------------------------------------------------

    def turn_started(self) -> None:
        self.phase, self.since = "thinking", time.monotonic()
        if self.enabled and self._task is None:
            self._task = asyncio.ensure_future(self._spin())

    def turn_ended(self) -> None:
        self.phase = "idle"
        self.stop()

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None
        self.clear()

    def pause(self) -> None:
        """A question is open: no spinner over it."""
        self._paused += 1
        self.clear()

    def resume(self) -> None:
        self._paused = max(self._paused - 1, 0)

    def clear(self) -> None:
        if self._drawn:
            self._drawn = False
            with contextlib.suppress(OSError, ValueError):
                self.stream.write("\r\x1b[2K")
                self.stream.flush()

    async def _spin(self) -> None:
        while True:
            await asyncio.sleep(TICK)
            self._draw()

    def _draw(self) -> None:
        renderer = self.repl.renderer
        text = self.line()
        if not text or self._paused or renderer is None or not renderer.at_line_start:
            return
        self._frame = (self._frame + 1) % len(FRAMES)
        width = _columns() - 5  # room for an echoed "^C": a full line would wrap and stay
        with contextlib.suppress(OSError, ValueError):
            self.stream.write(f"\r\x1b[2K\x1b[2m{FRAMES[self._frame]} {text[:width]}\x1b[0m")
            self.stream.flush()
            self._drawn = True


def _columns() -> int:
    import shutil

    return shutil.get_terminal_size((100, 24)).columns
