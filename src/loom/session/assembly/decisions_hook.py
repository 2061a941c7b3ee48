"""The decision graph in a session: the recorder its tools write through, the context zone
the model sees, the cascade event, and the entries Loom makes by itself.

Automatic entries:
- a git commit made during the session is an `outcome` (with its SHA) linked to the
  session's active goal (the newest goal this thread logged, else the project's);
- an architect plan is a `goal` with each step an `action`, and each step's result an
  `outcome` below its action.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from loom.core.events import ArchitectPlan, ArchitectStep, DecisionCascade

if TYPE_CHECKING:
    from loom.core.thread import Thread
    from loom.decisions.index import NodeRow
    from loom.decisions.recorder import DecisionRecorder
    from loom.paths import LoomPaths
    from loom.session.runtime.session import Session

log = logging.getLogger(__name__)


class SessionDecisions:
    """One session's decision graph, built before the session: its recorder (for the
    tools, `ToolServices.decisions`), the zone's text (`context`) and the post-tools hook
    (`after_tools`) go into its options; `attach(session)` once it is built follows its
    events and saves; `close()` when the session stops."""

    def __init__(self, thread: Thread, paths: LoomPaths) -> None:
        from loom.decisions.recorder import DecisionRecorder

        self._thread = thread
        self._session: Session | None = None
        self.loop = asyncio.get_running_loop()
        self.recorder: DecisionRecorder = DecisionRecorder(
            thread=thread,
            database=paths.database,
            threads_dir=paths.threads_dir,
            on_change=self._changed,
            on_cascade=self._cascade,
            git_meta=self._git_meta,
        )
        self._commits_seen: set[str] = set(thread.git_commits)
        self._plan_goal: str | None = None
        self._step_actions: dict[int, str] = {}
        self._unsubscribe: Callable[[], None] | None = None

    def context(self, budget: int) -> str:
        """The decision zone's text within `budget` tokens (`SessionOptions.decision_context`)."""
        from loom.decisions.context import build_decision_context

        return build_decision_context(self.recorder.index(), self.recorder.workspace_root, budget)

    def attach(self, session: Session) -> None:
        """Follow the session built with this graph: its saves, its events, and the
        commits it started with (none of them is this session's work)."""
        self._session = session
        self._commits_seen = set(session.thread.git_commits)
        self._unsubscribe = session.subscribe(self._on_event)

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()

    @property
    def thread(self) -> Thread:
        return self._session.thread if self._session is not None else self._thread

    # -- recorder callbacks (called from worker threads) --------------------------------

    def _changed(self) -> None:
        if self._session is not None:
            self._threadsafe(self._session.request_save)

    def _cascade(self, node: NodeRow, uncertain: list[NodeRow]) -> None:
        session = self._session
        if session is None:
            return
        event = DecisionCascade(
            session_id=session.id,
            node_id=node.id,
            title=node.title,
            confidence=node.confidence,
            uncertain=[{"id": n.id, "title": n.title, "node_type": n.node_type} for n in uncertain],
        )
        self._threadsafe(session.publish, event)

    def _threadsafe(self, fn: Callable[..., Any], *args: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the loop has closed: the run is over
            self.loop.call_soon_threadsafe(fn, *args)

    def _git_meta(self) -> dict[str, Any]:
        thread = self.thread
        meta: dict[str, Any] = {}
        if thread.git_branch:
            meta["branch"] = thread.git_branch
        if thread.git_current_commit_sha:
            meta["commit"] = thread.git_current_commit_sha
        return meta

    # -- automatic entries ---------------------------------------------------------------

    async def after_tools(self, session: Session) -> None:
        """The post-tools hook: the round's new commits become outcomes."""
        # the tool runner has snapshotted git after each tool that can change the tree
        new = [sha for sha in session.thread.git_commits if sha not in self._commits_seen]
        if not new:
            return
        self._commits_seen.update(new)
        await asyncio.to_thread(self._log_commits, new)

    def _log_commits(self, shas: list[str]) -> None:
        goal = self._active_goal()
        for sha in shas:
            self.recorder.add(
                node_type="outcome",
                title=f"Committed {sha[:10]}",
                description="A git commit made during this session.",
                confidence=90,
                parent=goal,
                metadata={"commit": sha},
            )

    def _active_goal(self) -> str | None:
        goals = [
            n for n in self.recorder.log.nodes if n.node_type == "goal" and n.status == "active"
        ]
        if goals:
            return goals[-1].id
        rows = self.recorder.index().nodes(
            workspace_root=self.recorder.workspace_root,
            types=["goal"],
            statuses=["active"],
            limit=1,
        )
        return rows[0].id if rows else None

    def _on_event(self, event: Any) -> None:
        if isinstance(event, ArchitectPlan | ArchitectStep):
            # the recorder touches SQLite: off the event loop
            self.loop.create_task(asyncio.to_thread(self._record_plan, event))

    def _record_plan(self, event: ArchitectPlan | ArchitectStep) -> None:
        try:
            if isinstance(event, ArchitectPlan):
                title = event.summary.strip().splitlines()[0] if event.summary.strip() else ""
                goal = self.recorder.add(
                    node_type="goal",
                    title=title[:120] or "Architect plan",
                    description=event.summary,
                    confidence=70,
                ).node
                self._plan_goal = goal.id if goal else None
                self._step_actions.clear()
                for number, step in enumerate(event.steps, start=1):
                    text = step.get("description") or step.get("action") or f"step {number}"
                    action = self.recorder.add(
                        node_type="action",
                        title=f"Step {number}: {text}"[:160],
                        description=" ".join(
                            f"{k}: {v}" for k, v in step.items() if v and k != "description"
                        ),
                        parent=self._plan_goal,
                    ).node
                    if action is not None:
                        self._step_actions[number] = action.id
            elif event.status in ("completed", "failed") and event.index in self._step_actions:
                outcome = (event.outcome or event.status).strip()
                self.recorder.add(
                    node_type="outcome",
                    title=f"Step {event.index} {event.status}",
                    description=outcome[:2000],
                    confidence=85 if event.status == "completed" else 30,
                    parent=self._step_actions[event.index],
                )
        except Exception as exc:  # the plan runs on; the graph misses an entry
            log.warning("could not record the architect plan in the decision graph: %s", exc)
