"""Architect mode (seed 001): a strong model plans, a fast model carries out each step.

1. The architect model (config `model.architect`, else the provider's strong model)
   gets the request with a planning prompt and no tools, and answers with a JSON plan
   (`loom.core.plan`). A bad plan is answered with a message saying exactly what is
   wrong, up to `architect_plan_attempts`.
2. For each step the editor model (config `model.editor`, else the provider's fast one)
   gets a step message and the file tools only, through the same loop and the same
   permission rules as normal mode.
3. Everything is in the thread: the request, plan and step messages carry
   `mode="architect"`; the planning answer carries the parsed `plan`; each step's final
   answer carries `architect_outcome` (index, status), each step request `architect_step`.
   Events: architect_plan, then
   architect_step started/completed/failed/interrupted for each step.

A failed step stops the plan (later steps usually depend on it); the summary says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from loom.core import state as sm
from loom.core.clock import now_iso
from loom.core.events import ArchitectPlan, ArchitectStep
from loom.core.ids import new_message_id
from loom.core.messages import AssistantMessage, UserMessage
from loom.core.plan import Plan, PlanError, parse_plan
from loom.core.todos import MAX_CONTENT_CHARS, TodoItem
from loom.session.runtime.ports import TurnError
from loom.session.runtime.prompt import EDITOR_STEP_PROMPT
from loom.session.runtime.role_models import model_for
from loom.tools.base import ToolRegistry

if TYPE_CHECKING:
    from loom.session.runtime.ports import ArchitectPort

StepStatus = Literal["started", "completed", "failed", "interrupted"]  # ArchitectStep

FILE_TOOLS = frozenset(
    {"file_read", "file_write", "file_edit", "file_search", "content_search", "directory_list"}
)


def editor_tools(tools: ToolRegistry) -> ToolRegistry:
    """The file tools of `tools` (or, without any built-in file tool, every tool that
    does not execute commands)."""
    chosen = [tools.get(name) for name in tools.names() if name in FILE_TOOLS]
    if not chosen:
        chosen = [tool for tool in map(tools.get, tools.names()) if tool and tool.risk != "execute"]
    return ToolRegistry(tool for tool in chosen if tool is not None)


async def run_architect_turn(session: ArchitectPort, text: str) -> str:
    session.busy = True
    try:
        plan = await _plan(session, text)
        while plan is not None:
            session.publish(
                ArchitectPlan(
                    session_id=session.id,
                    summary=plan.summary,
                    steps=[step.to_dict() for step in plan.steps],
                )
            )
            verdict, change = await _approval(session, plan)
            if verdict == "yes":
                break
            if verdict == "no":
                return DECLINED
            plan = await _plan(session, PLAN_CHANGE.format(change=change))
        if plan is None:
            return ""  # interrupted while planning
        outcomes: list[str] = []
        completed = 0
        session.active_model = model_for(session, "editor")
        session.active_tools = editor_tools(session.tools)
        total = len(plan.steps)
        statuses: dict[int, str] = {}
        session.update_todos(plan_todos(plan, statuses), "architect")  # the faces' checklist
        for index, step in enumerate(plan.steps, 1):
            event = {"index": index, "total": total, **step.to_dict()}
            session.publish(ArchitectStep(session_id=session.id, status="started", **event))
            statuses[index] = "started"
            session.update_todos(plan_todos(plan, statuses), "architect")
            prompt = EDITOR_STEP_PROMPT.format(index=index, total=total, **step.to_dict())
            message = _user(prompt, architect_step=index)
            end = await session.drive(sm.UserInput(message))
            status, outcome = _status(end)
            _mark_last(session, {"index": index, "status": status})
            session.publish(
                ArchitectStep(session_id=session.id, status=status, outcome=outcome, **event)
            )
            statuses[index] = status
            session.update_todos(plan_todos(plan, statuses), "architect")
            outcomes.append(f"{index}. {status}: {outcome}")
            if status != "completed":
                break
            completed += 1
        await session.flush()
        report = "\n".join(outcomes)
        return f"{plan.describe()}\n\nCarried out {completed} of {total} steps:\n{report}"
    finally:
        session.active_model = session.model
        session.active_tools = session.tools
        session.llm.system_prompt = None
        session.busy = False
        session.settle_status()


def plan_todos(plan: Plan, statuses: dict[int, str]) -> list[TodoItem]:
    """A plan as the todo list every face shows (`statuses`: 1-based step -> its
    ArchitectStep status): done steps completed, the running one in progress."""
    items = []
    for index, step in enumerate(plan.steps, 1):
        status = statuses.get(index)
        where = f" {step.file}" if step.file else ""
        items.append(
            TodoItem(
                content=f"[{step.action}]{where}: {step.description}"[:MAX_CONTENT_CHARS],
                status="completed" if status == "completed"
                else "in_progress" if status in ("started", "failed", "interrupted")
                else "pending",
            )
        )  # fmt: skip
    return items


DECLINED = "Plan declined: no step was carried out, nothing was changed."
PLAN_CHANGE = (
    "The user reviewed this plan and wants it changed before any step runs: {change}\n"
    "Reply with the whole revised plan, as JSON in the same format."
)


async def _approval(session: ArchitectPort, plan: Plan) -> tuple[str, str]:
    """The person's verdict on `plan` (options.plan_approval), "yes" when nobody asks."""
    approve = session.options.plan_approval
    if approve is None:
        return "yes", ""
    verdict, change = await approve(plan)
    if verdict == "edit" and not change.strip():
        return "no", ""
    return (verdict if verdict in ("yes", "no", "edit") else "no"), change.strip()


async def _plan(session: ArchitectPort, text: str) -> Plan | None:
    options = session.options
    session.active_model = model_for(session, "architect")
    session.active_tools = ToolRegistry()
    session.llm.system_prompt = await session.prompts.architect()
    message: UserMessage = _user(text)
    problem = ""
    try:
        for _attempt in range(max(1, options.architect_plan_attempts)):
            end = await session.drive(sm.UserInput(message))
            if end.interrupted:
                return None
            if end.error is not None:
                raise TurnError(f"the architect model failed: {end.error.message}")
            try:
                plan = parse_plan(end.text)
            except PlanError as exc:
                problem = str(exc)
                message = _user(problem, plan_feedback=True)
                continue
            _mark_last(session, None, plan=plan.to_dict())
            return plan
    finally:
        session.llm.system_prompt = None
    raise TurnError(
        f"the architect model did not produce a usable plan after "
        f"{options.architect_plan_attempts} attempts ({problem.split('. Reply')[0]}); try "
        "rephrasing the request or switch to normal mode with /normal"
    )


def _status(end: sm.EndTurn) -> tuple[StepStatus, str]:
    if end.interrupted:
        return "interrupted", "interrupted by the user"
    if end.error is not None:
        return "failed", end.error.message
    return "completed", end.text.strip() or "(no answer)"


def _user(text: str, **extra: Any) -> UserMessage:
    fields = {"mode": "architect", **extra}  # fields beyond the model's: kept as extras
    return UserMessage(content=text, id=new_message_id(), created_at=now_iso(), **fields)


def _mark_last(session: ArchitectPort, step: dict[str, Any] | None, **extra: Any) -> None:
    """Annotate the latest assistant message (still the last message: allowed)."""
    last = session.thread.messages[-1] if session.thread.messages else None
    if not isinstance(last, AssistantMessage):
        return
    if step is not None:
        last.architect_outcome = step  # type: ignore[attr-defined]
    for key, value in extra.items():
        setattr(last, key, value)
    session.request_save()
