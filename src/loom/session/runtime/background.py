"""A session's background commands as faces and the model see them (loom.tools.background
holds them; the shell tool of the session's tool set owns the one registry)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from loom.core.events import BackgroundCommandChanged
from loom.core.messages import Attachment


@dataclass(frozen=True)
class BackgroundView:
    id: str
    command: str
    running_s: float
    state: str  # running, exited, killed
    exit_code: int | None


def registry_of(tools: Any) -> Any:
    """The session's BackgroundCommands, or None (no shell, or a tool set without them)."""
    try:
        shell = tools.get("shell")
    except Exception:
        return None
    return getattr(shell, "background", None)


def views(tools: Any) -> list[BackgroundView]:
    registry = registry_of(tools)
    if registry is None:
        return []
    return [
        BackgroundView(job.id, job.command, job.running_for(), job.state, job.exit_code)
        for job in registry.commands.values()
    ]


def finished_notes(tools: Any) -> list[Attachment]:
    """A note (an attachment Loom adds to the person's message, kept apart from their
    words) listing the background commands that ended since the model was last told, so
    it knows without asking; none when none ended."""
    registry = registry_of(tools)
    lines = registry.take_finished() if registry is not None else []
    if not lines:
        return []
    text = "[background commands that ended]\n" + "\n".join(lines)
    return [Attachment(kind="loom", label="background commands that ended", text=text)]


def ended_note(tools: Any) -> str:
    """For each model call's context block: the background commands that ended and the
    model was not told yet, so it hears of them in its next request, not only at the
    person's next message (which then keeps them in the thread: `finished_notes`)."""
    registry = registry_of(tools)
    lines = registry.ended_unread() if registry is not None else []
    return "[background commands that ended]\n" + "\n".join(lines) if lines else ""


def publish_changes(tools: Any, session_id: str, publish: Any) -> None:
    """Publish a BackgroundCommandChanged on the session's bus for each change of its
    background commands (started, output ended, exited, killed)."""
    registry = registry_of(tools)
    if registry is None:
        return

    def tell(job: Any, change: str) -> None:
        event = BackgroundCommandChanged(
            session_id=session_id, command_id=job.id, command=job.command,
            change=cast("Any", change), exit_code=job.exit_code if change == "exited" else None,
        )  # fmt: skip
        publish(event)

    registry.listener = tell
