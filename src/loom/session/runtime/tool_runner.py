"""Running one tool call for a session: permission, timeout, errors, progress.

Whatever goes wrong inside a tool (a ToolError, any other exception, a hang past the
timeout) becomes an error *result* the model can read; it never escapes into the
session. Only cancellation (an interrupt) propagates.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from loom.core import state as sm
from loom.core.clock import now_iso
from loom.core.events import SessionError, ToolComplete, ToolExecuting
from loom.core.ids import new_message_id
from loom.core.messages import ToolCall
from loom.core.secrets import redact
from loom.core.todos import TodoItem
from loom.llm.base import invalid_arguments_text
from loom.tools.base import (
    Tool,
    ToolContext,
    ToolError,
    ToolRegistry,
    may_change_files,
    parallel_safe,
    risk_of,
)
from loom.tools.file_read import IMAGE_KEY
from loom.tools.todo import TODOS_KEY

if TYPE_CHECKING:
    from loom.session.runtime.permission_gate import Gate
    from loom.session.runtime.ports import ToolPort

log = logging.getLogger(__name__)

MAX_RESULT_CHARS = 200_000


@dataclass(frozen=True)
class ToolRunResult:
    content: str
    is_error: bool
    crashed: bool = False  # an unexpected exception (reported as a Tool error event too)
    metadata: dict[str, Any] = field(default_factory=dict)  # the tool's ToolResult.metadata


def lookup_error(call: ToolCall, tools: ToolRegistry) -> str | None:
    """Why this call cannot run at all (unknown tool, arguments that are not an object,
    missing required arguments), as a message that tells the model how to fix it."""
    tool = tools.get(call.tool_name)
    if tool is None:
        names = ", ".join(tools.names()) or "(none)"
        return (
            f"There is no tool named {call.tool_name!r}. Available tools: {names}. "
            "Call one of these by its exact name."
        )
    raw = invalid_arguments_text(call)
    if raw is not None:
        return (
            f"The arguments for {call.tool_name} were not a JSON object (got {raw[:200]!r}). "
            f"Send an object matching this schema: {tool.parameters}"
        )
    required = tool.parameters.get("required") or []
    missing = [name for name in required if name not in call.arguments_json]
    if missing:
        return (
            f"{call.tool_name} is missing required argument(s): {', '.join(missing)}. "
            f"Its parameters are: {tool.parameters.get('properties', {})}"
        )
    return None


async def run_tool(
    tool: Tool, args: dict[str, Any], ctx: ToolContext, timeout: float | None
) -> ToolRunResult:
    try:
        async with asyncio.timeout(timeout):  # no extra task per call, unlike wait_for
            result = await tool.run(args, ctx)
    except ToolError as exc:
        return ToolRunResult(str(exc) or f"{tool.name} failed", is_error=True)
    except TimeoutError:
        return ToolRunResult(
            f"{tool.name} did not finish within {timeout:g} s and was stopped. Break the work "
            "into smaller calls, or ask the user to raise the timeout.",
            is_error=True,
        )
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        log.exception("tool %s crashed", tool.name)
        return ToolRunResult(
            f"{tool.name} failed unexpectedly ({type(exc).__name__}: {exc}). This is a bug in "
            "the tool, not in your call; try another way.",
            is_error=True,
            crashed=True,
        )
    content = getattr(result, "content", None)
    if not isinstance(content, str):
        return ToolRunResult(
            f"{tool.name} returned no text result (a bug in the tool); try another way.",
            is_error=True,
            crashed=True,
        )
    if len(content) > MAX_RESULT_CHARS:
        dropped = len(content) - MAX_RESULT_CHARS
        content = content[:MAX_RESULT_CHARS] + f"\n[... {dropped} more characters not shown]"
    metadata = getattr(result, "metadata", None)
    metadata = metadata if isinstance(metadata, dict) else {}
    return ToolRunResult(content, bool(getattr(result, "is_error", False)), metadata=metadata)


async def execute_call(session: ToolPort, gate: Gate, call: ToolCall) -> sm.AgentEvent:
    """Check (through `gate`), run and report one tool call for a session; returns the
    event to feed the machine (ToolCompleted or PermissionDenied)."""
    problem = lookup_error(call, session.active_tools)
    if problem is not None:
        return sm.ToolCompleted(call.id, sm.ToolOutcome(problem, is_error=True), time.time())
    hooks = getattr(session, "hooks", None)
    verdict = await hooks.pre_tool_use(call) if hooks is not None else None
    if verdict is not None:
        if verdict.blocked or verdict.stop is not None:
            from loom.session.runtime.hook_points import refusal_text

            outcome = sm.ToolOutcome(refusal_text(verdict), is_error=True)
            return sm.ToolCompleted(call.id, outcome, time.time())
        if verdict.updated_input is not None:  # the hook rewrote the call's input
            call = call.model_copy(update={"arguments_json": verdict.updated_input})
            problem = lookup_error(call, session.active_tools)
            if problem is not None:
                outcome = sm.ToolOutcome(f"After a PreToolUse hook changed it: {problem}", True)
                return sm.ToolCompleted(call.id, outcome, time.time())
    tool = session.active_tools.get(call.tool_name)
    if tool is None:  # looked up before; gone since (a sub-agent's narrowed set, a hook)
        outcome = sm.ToolOutcome(f"unknown tool {call.tool_name!r}", is_error=True)
        return sm.ToolCompleted(call.id, outcome, time.time())
    args = call.arguments_json
    denied = await gate.check(tool, call, verdict.decision if verdict is not None else None)
    if denied is not None:
        return denied
    # `may_change_files`: a call that asks nothing itself but whose work edits (a task:
    # its sub-agent's calls are checked one by one) still gets a checkpoint before it
    changes_files = risk_of(tool, args) != "read" or may_change_files(tool)
    if changes_files:
        session.prompts.files_may_have_changed()  # the next call hears of the git state
    if changes_files and session.options.checkpointer is not None:
        await session.options.checkpointer.before_tool(session, call)
    session.apply_now(sm.ToolStarted(call.id, time.time()))
    session.publish(
        ToolExecuting(
            session_id=session.id, tool_name=call.tool_name, call_id=call.id, arguments=args
        )
    )

    def progress(fraction: float | None, message: str) -> None:
        info = sm.ToolProgressInfo(fraction, message)
        session.apply_now(sm.ToolProgressed(call.id, info, time.time()))

    ctx = ToolContext(
        project_root=session.project_root,
        session_id=session.id,
        thread_id=session.thread.id,
        progress=progress,
        services=session.options.tool_services,
        call_id=call.id,
    )
    result = await run_tool(tool, args, ctx, session.options.tool_timeout)
    if result.crashed:
        session.publish(SessionError(session_id=session.id, origin="Tool", message=result.content))
    session.publish(
        ToolComplete(
            session_id=session.id,
            tool_name=call.tool_name,
            call_id=call.id,
            result=redact(result.content, session.options.secrets),
            is_error=result.is_error,
        )
    )
    if session.in_git_repo and changes_files:
        await session.git_snapshot()
    outcome = sm.ToolOutcome(result.content, result.is_error)
    if not result.is_error:
        outcome = await _after_success(session, tool, args, result)
    if hooks is not None:
        feedback = await hooks.post_tool_use(call, result.content, result.is_error)
        if feedback:
            outcome = replace(outcome, content=f"{outcome.content}\n\n{feedback}")
    return sm.ToolCompleted(call.id, outcome, time.time(), new_message_id(), now_iso())


async def execute_calls(
    session: ToolPort, gate: Gate, calls: Sequence[ToolCall]
) -> list[sm.AgentEvent]:
    """Run read-only calls at the same time; their events in the calls' order."""
    return list(await asyncio.gather(*(execute_call(session, gate, call) for call in calls)))


def runs_in_parallel(tools: ToolRegistry, call: ToolCall) -> bool:
    """A call that may run beside other read-only calls of the same answer: its tool
    only reads (for these arguments) and does not opt out (`parallel_safe = False`:
    todo_write, whose lists must land in order)."""
    tool = tools.get(call.tool_name)
    if tool is None or lookup_error(call, tools) is not None:
        return False
    return risk_of(tool, call.arguments_json) == "read" and parallel_safe(tool)


async def _after_success(
    session: ToolPort, tool: Tool | None, args: dict[str, Any], result: ToolRunResult
) -> sm.ToolOutcome:
    """What a successful call changes beyond its result: a todo list for the faces; an
    image file read, shown to a model that takes images; the instruction files
    (AGENTS.md, ...) of a folder the agent reached for the first time, added to the
    result the model reads."""
    todos = result.metadata.get(TODOS_KEY)
    if isinstance(todos, list):
        session.update_todos([TodoItem.model_validate(item) for item in todos])
    outcome = sm.ToolOutcome(result.content)
    image = result.metadata.get(IMAGE_KEY)
    if isinstance(image, tuple):
        outcome = await asyncio.to_thread(image_outcome, session, result.content, *image)
    note = ""
    if session.prompts.nested_may_apply(tool, args):  # else no trip to a worker thread
        note = await asyncio.to_thread(session.prompts.nested_for, tool, args)
    if note:
        outcome = replace(outcome, content=f"{outcome.content}\n\n{note}")
    return outcome


def image_outcome(session: ToolPort, text: str, name: str, data: bytes) -> sm.ToolOutcome:
    """An image file the agent read: attached to its result for models that take images
    on a wire Loom knows how to carry them in (Anthropic and Gemini in the result;
    OpenAI's in a user message after the answer's results), else a plain error."""
    from loom.core.images import ImageError, image_ref
    from loom.llm.catalog import takes_images
    from loom.llm.registry import parse_model_name
    from loom.providers import declaration

    model = session.active_model
    provider, model_id = parse_model_name(model)
    if not takes_images(provider, model_id, session.options.image_models):
        why = f"{model} does not take images"
    elif not ((decl := declaration(provider)) and decl.images_in_tool_results):
        why = f"Loom does not send images in {provider}'s tool results"
    else:
        try:
            ref = image_ref(name, data)
        except ImageError as exc:
            return sm.ToolOutcome(f"{text}\n{exc}", is_error=True)
        store = session.options.image_store
        if store is not None:
            store.put(ref)
        return sm.ToolOutcome(f"{text} It is attached below.", images=(ref,))
    return sm.ToolOutcome(
        f"{text} It cannot be shown to you: {why}. Ask the person to describe it, or to "
        "attach it with @path while using a model that takes images.",
        is_error=True,
    )
