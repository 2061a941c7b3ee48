"""Undo, redo and rewind as the faces reach them: on a live session (REPL `/undo`,
`/redo`, `/rewind`; the web page and ACP later) or on a saved thread (`loom undo`).

Both paths run the same operations (loom.session.helpers.rewind), record them in the thread,
save it, and, on a live session, publish `files_restored` / `conversation_rewound`
events so every face shows what happened.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from loom.core import state as sm
from loom.core.branches import visible_messages
from loom.core.events import ConversationRewound, FilesRestored
from loom.session.helpers.rewind import (
    HandEdited,
    NothingToRestore,
    RestoreReport,
    UserTurn,
    redo,
    rewind_code,
    rewind_conversation,
    undo,
    user_turns,
)

if TYPE_CHECKING:
    from loom.session.runtime.session import Session

__all__ = [
    "HandEdited",
    "NothingToRestore",
    "RestoreReport",
    "RewindOutcome",
    "UserTurn",
    "list_user_turns",
    "restore_in_session",
    "restore_saved_thread",
    "rewind_in_session",
]

Action = Literal["undo", "redo"]


@dataclass
class RewindOutcome:
    code: RestoreReport | None  # None: code untouched (not asked, or nothing changed)
    hidden_messages: int  # messages set aside from the model's view


def _store_of(session: Session) -> Any:
    checkpointer = session.options.checkpointer
    if checkpointer is None:
        raise NothingToRestore(
            "checkpoints are off for this session ([checkpoints] enabled = false)"
        )
    return checkpointer.store


def _check_idle(session: Session) -> None:
    if session.get_status() != "idle" or session.busy:
        raise NothingToRestore("the agent is working; wait for the turn to end (or Ctrl-C)")


async def restore_in_session(
    session: Session, action: Action, *, force: bool = False
) -> RestoreReport:
    """/undo or /redo on a live session. Raises HandEdited (ask, then force=True),
    NothingToRestore or CheckpointError with a message for the person."""
    _check_idle(session)
    store = _store_of(session)
    operation = undo if action == "undo" else redo
    report = await asyncio.to_thread(operation, session.thread, store, force=force)
    session.prompts.files_may_have_changed()  # the next call hears the git state as it is
    session.request_save()
    await session.flush()
    session.publish(_files_event(session.id, report))
    return report


def list_user_turns(session_or_thread: Any) -> list[UserTurn]:
    thread = getattr(session_or_thread, "thread", session_or_thread)
    return [turn for turn in user_turns(thread) if turn.index not in _hidden(thread)]


async def rewind_in_session(
    session: Session, turn_id: str, *, code: bool, conversation: bool, force: bool = False
) -> RewindOutcome:
    """/rewind: restore the files, the conversation, or both to before user turn
    `turn_id`. The rewound messages stay in the thread as a side branch."""
    _check_idle(session)
    report = None
    if code:
        store = _store_of(session)
        report = await asyncio.to_thread(rewind_code, session.thread, store, turn_id, force=force)
        session.prompts.files_may_have_changed()  # the next call hears the git state as it is
    hidden = 0
    if conversation:
        hidden = rewind_conversation(session.thread, turn_id)
        # the machine now holds the live conversation only (its context is rebuilt)
        session.state = sm.WaitingForUserInput(tuple(visible_messages(session.thread)))
    session.request_save()
    await session.flush()
    if report is not None:
        session.publish(_files_event(session.id, report))
    if hidden:
        session.publish(ConversationRewound(session_id=session.id, hidden_messages=hidden))
    return RewindOutcome(report, hidden)


def restore_saved_thread(
    workspace: Any, thread_ref: str | None, action: Action, *, force: bool = False
) -> tuple[str, RestoreReport]:
    """`loom undo` / `loom redo`: on a saved thread (default: the newest thread of this
    project that took checkpoints), holding its writer lock. Returns (thread id, report)."""
    from loom.session.runtime.checkpointing import checkpointer_for
    from loom.session.workspace.threads_api import person_errors

    threads = workspace.threads
    thread_id = threads.resolve(thread_ref) if thread_ref else _newest_thread(workspace)
    with person_errors(), threads.local.open_for_writing(thread_id):
        thread = threads.load(thread_id)
        root = Path(thread.workspace_root or workspace.project_root)
        checkpointer = checkpointer_for(root, workspace.config, workspace.paths.data)
        if checkpointer is None:
            raise NothingToRestore("checkpoints are off ([checkpoints] enabled = false)")
        operation = undo if action == "undo" else redo
        report = operation(thread, checkpointer.store, force=force)
        thread.touch()
        threads.local.save(thread)
    return thread_id, report


def _newest_thread(workspace: Any) -> str:
    """The newest thread of this project that took checkpoints."""
    from loom.session.runtime.checkpointing import records

    root = str(Path(workspace.project_root).resolve())
    for summary in workspace.threads.list(limit=200):
        if summary.workspace_root != root:
            continue
        thread = workspace.threads.load(summary.id)
        if records(thread):
            return thread.id
    raise NothingToRestore(
        f"no thread of this project ({root}) has checkpoints to undo; pass --thread ID "
        "(`loom list` shows them)"
    )


def _hidden(thread: Any) -> set[int]:
    from loom.core.branches import hidden_indexes

    return hidden_indexes(thread)


def _files_event(session_id: str, report: RestoreReport) -> FilesRestored:
    return FilesRestored(
        session_id=session_id,
        action=report.action,  # type: ignore[arg-type]
        paths=report.paths,
        overwritten=report.overwritten,
    )
