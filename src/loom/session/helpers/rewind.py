"""Undo, redo and rewind: putting the project's files (and the conversation) back.

Reads the thread's checkpoint records (loom.session.runtime.checkpointing) and restores from
the project's checkpoint store. Every restore is recorded in the thread too ("undo",
"redo", "rewind" with the commit it left and the one it restored), so:

- undo takes back the newest turn that changed files and is not undone yet;
- redo reapplies the newest undo or code rewind (until a new turn changes files);
- a file the person changed by hand since Loom last left the files is never
  overwritten silently: `HandEdited` lists them and the caller asks (REPL) or refuses
  (headless); `force=True` goes ahead.

These functions are synchronous (git runs as subprocesses); callers run them off the
event loop. They change the thread object; the caller saves it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from loom.checkpoints import CheckpointError, CheckpointStore, RestoreResult
from loom.core.branches import set_aside
from loom.core.messages import UserMessage
from loom.session.runtime.checkpointing import add_record, records


class NothingToRestore(CheckpointError):
    """There is no turn to undo, nothing to redo, or no checkpoint for that turn."""


class HandEdited(CheckpointError):
    """Files changed since Loom last left them would be overwritten."""

    def __init__(self, paths: list[str], action: str) -> None:
        self.paths = paths
        self.action = action
        listed = ", ".join(paths[:20]) + (f" and {len(paths) - 20} more" if len(paths) > 20 else "")
        super().__init__(
            f"{action} would overwrite changes made by hand since the agent's last turn: "
            f"{listed}. Nothing was changed"  # each face says how to go ahead
        )


@dataclass
class RestoreReport:
    action: str  # undo, redo, rewind
    turns: list[str]  # the user turns (message ids) taken back or reapplied
    result: RestoreResult = field(default_factory=RestoreResult)
    overwritten: list[str] = field(default_factory=list)  # hand edits replaced (force)

    @property
    def paths(self) -> list[str]:
        return self.result.paths


@dataclass
class UserTurn:
    index: int  # position of the user message in the thread
    message: UserMessage
    has_checkpoint: bool
    undone: bool


@dataclass
class _History:
    order: list[str] = field(default_factory=list)  # turns that took checkpoints, in order
    before: dict[str, str] = field(default_factory=dict)  # turn -> first snapshot commit
    undone: list[str] = field(default_factory=list)
    redo_stack: list[dict[str, Any]] = field(default_factory=list)
    expected: str | None = None  # the files as Loom last left them (None: unknown)


def _replay(thread: Any) -> _History:
    history = _History()
    for record in records(thread):
        kind, turn, commit = record.get("kind"), record.get("turn_id"), record.get("commit")
        if kind == "before_tool" and isinstance(commit, str) and isinstance(turn, str):
            if turn not in history.before:
                history.before[turn] = commit
                history.order.append(turn)
            history.redo_stack.clear()  # a new change: what was undone stays undone
            history.expected = None  # the tool is about to change the files
        elif kind == "turn_end" and isinstance(commit, str):
            history.expected = commit
        elif kind in ("undo", "rewind"):
            history.undone.extend(t for t in record.get("turns", []) if t not in history.undone)
            history.redo_stack.append(record)
            history.expected = record.get("to")
        elif kind == "redo":
            if history.redo_stack:
                redone = history.redo_stack.pop()
                history.undone = [t for t in history.undone if t not in redone.get("turns", [])]
            history.expected = record.get("to")
    return history


def user_turns(thread: Any) -> list[UserTurn]:
    """The user turns of the thread (for /rewind), oldest first."""
    history = _replay(thread)
    return [
        UserTurn(i, m, m.id in history.before, m.id in history.undone)
        for i, m in enumerate(thread.messages)
        if isinstance(m, UserMessage)
    ]


def undo(thread: Any, store: CheckpointStore, *, force: bool = False) -> RestoreReport:
    history = _replay(thread)
    turn = next((t for t in reversed(history.order) if t not in history.undone), None)
    if turn is None:
        raise NothingToRestore("nothing to undo: no agent turn in this thread changed files")
    return _restore(thread, store, history, "undo", [turn], history.before[turn], force)


def redo(thread: Any, store: CheckpointStore, *, force: bool = False) -> RestoreReport:
    history = _replay(thread)
    if not history.redo_stack:
        raise NothingToRestore("nothing to redo: no undo since the agent last changed files")
    last = history.redo_stack[-1]
    return _restore(
        thread, store, history, "redo", list(last.get("turns", [])), last["from"], force
    )


def rewind_code(
    thread: Any, store: CheckpointStore, turn_id: str, *, force: bool = False
) -> RestoreReport | None:
    """Restore the files to before user turn `turn_id`; None when no turn from there
    on changed files (there is nothing to restore)."""
    history = _replay(thread)
    position = _position(thread, turn_id)
    later = {
        m.id for m in thread.messages[position:] if isinstance(m, UserMessage) and m.id is not None
    }
    turns = [t for t in history.order if t in later and t not in history.undone]
    if not turns:
        return None
    return _restore(thread, store, history, "rewind", turns, history.before[turns[0]], force)


def rewind_conversation(thread: Any, turn_id: str) -> int:
    """Set aside the conversation from user turn `turn_id` on (kept in the thread as a
    side branch); returns how many messages the model no longer sees."""
    position = _position(thread, turn_id)
    branch = set_aside(thread, position, reason="rewind")
    return 0 if branch is None else branch["end"] - branch["start"]


def _position(thread: Any, turn_id: str) -> int:
    for index, message in enumerate(thread.messages):
        if isinstance(message, UserMessage) and message.id == turn_id:
            return index
    raise NothingToRestore(f"no user message {turn_id!r} in this thread; pick one /rewind lists")


def _restore(
    thread: Any,
    store: CheckpointStore,
    history: _History,
    action: str,
    turns: list[str],
    target: str,
    force: bool,
) -> RestoreReport:
    if not store.exists(target):
        raise CheckpointError(
            f"the checkpoint for this {action} is no longer in the store (removed by "
            "`loom checkpoints gc` or [checkpoints] keep_days); nothing was changed"
        )
    now = store.snapshot(f"before {action}")
    touched = store.changed_paths(now.commit, target)
    overwritten: list[str] = []
    if history.expected is not None and store.exists(history.expected):
        edited = set(store.changed_paths(history.expected, now.commit))
        overwritten = sorted(edited & set(touched))
    if overwritten and not force:
        raise HandEdited(overwritten, action)
    result = store.restore(target, current=now)
    add_record(
        thread,
        {"kind": action, "turns": turns, "from": now.commit, "to": target, "paths": result.paths},
    )
    return RestoreReport(action, turns, result, overwritten)
