"""`[git] auto_commit = true`: commit the agent's changes after each turn (off by default).

Only the files the turn changed are committed (the turn's first checkpoint against its
end, so the person's own unstaged work elsewhere stays out), with a message made from
the turn: the request's first line, and the files. git runs as Loom's hardened git
(`loom._gitsafe`): the repo's hooks and configured programs do not run, because they
would run code the agent could have written (a pre-commit config, a Makefile, a hook
script in the project) outside the sandbox. A detached HEAD or any git error is
reported as an event and nothing is committed. The new commit is recorded in the
thread's `git_commits`.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

from loom._gitsafe import run_git
from loom.core.events import SessionError
from loom.core.messages import UserMessage

SUBJECT_CHARS = 72
GIT_TIMEOUT = 120.0


def commit_message(request: str, files: list[str]) -> str:
    """A commit message from the turn: the request's first line as the subject."""
    first = " ".join(request.strip().splitlines()[0].split()) if request.strip() else ""
    first = first.split("\n\n<file ")[0]
    subject = f"loom: {first}" if first else "loom: changes from an agent turn"
    if len(subject) > SUBJECT_CHARS:
        subject = subject[: SUBJECT_CHARS - 1].rstrip() + "…"
    shown = files[:20]
    body = "\n".join(f"- {path}" for path in shown)
    if len(files) > len(shown):
        body += f"\n- … and {len(files) - len(shown)} more"
    return f"{subject}\n\nChanged by the Loom agent:\n{body}\n"


async def commit_turn(session: Any, turn_id: str | None, before: str, after: str) -> None:
    checkpointer = session.options.checkpointer
    files = await asyncio.to_thread(checkpointer.store.changed_paths, before, after)
    if not files:
        return
    request = next(
        (
            m.content
            for m in session.thread.messages
            if isinstance(m, UserMessage) and m.id == turn_id
        ),
        "",
    )
    message = commit_message(request, files)
    try:
        sha = await asyncio.to_thread(_commit, session.project_root, files, message)
    except AutoCommitError as exc:
        session.publish(
            SessionError(session_id=session.id, origin="Tool", message=f"auto_commit: {exc}")
        )
        return
    if sha not in session.thread.git_commits:
        session.thread.git_commits.append(sha)
    session.thread.git_current_commit_sha = sha
    session.request_save()


class AutoCommitError(Exception):
    pass


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        done = run_git(root, "--literal-pathspecs", *args, read_only=False, timeout=GIT_TIMEOUT)
    except (OSError, subprocess.SubprocessError) as exc:
        raise AutoCommitError(f"git could not run: {exc}") from exc
    return subprocess.CompletedProcess(
        done.args,
        done.returncode,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
    )


def _commit(root: Path, files: list[str], message: str) -> str:
    head = _git(root, "symbolic-ref", "-q", "HEAD")
    if head.returncode != 0:
        raise AutoCommitError(
            "HEAD is detached, so the turn's changes were not committed (a commit there is "
            "easily lost); check out a branch to have them committed"
        )
    added = _git(root, "add", "-A", "--", *files)
    if added.returncode != 0:
        raise AutoCommitError(f"git add failed: {added.stderr.strip()}")
    done = _git(root, "commit", "-q", "-m", message, "--", *files)
    if done.returncode != 0:
        why = (done.stderr or done.stdout).strip() or f"exit {done.returncode}"
        raise AutoCommitError(f"git commit failed (nothing was committed): {why}")
    return _git(root, "rev-parse", "HEAD").stdout.strip()


async def after_turn(session: Any) -> None:
    """What happens when a turn ends: the end-of-turn checkpoint, then auto_commit."""
    checkpointer = session.options.checkpointer
    if checkpointer is None:
        return
    end = await checkpointer.after_turn(session)
    if end is None or not session.options.auto_commit or not session.in_git_repo:
        return
    turn_id, before = end
    await commit_turn(session, turn_id, before, _last_commit(session))


def _last_commit(session: Any) -> str:
    from loom.session.runtime.checkpointing import records

    return next(
        r["commit"] for r in reversed(records(session.thread)) if r.get("kind") == "turn_end"
    )
