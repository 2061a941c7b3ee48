"""Post-tool hooks (seed 003's PostToolsHook state): `[hooks] post_tools` commands run
after a round of tool calls that changed files, with those files.

    [hooks]
    post_tools = ["ruff format {files}", "ruff check --fix {files}"]

`{files}` becomes the changed files, shell-quoted (the round's checkpoint against the
files now; without checkpoints, the paths the file tools were given). Each command runs
through the agent's own `shell` tool, so the same permission policy (a person is asked
unless it is allowed; headless runs refuse) and the same sandbox apply. The output goes
to the model with the round's tool results: a failing formatter or linter is something
the model should see and fix.
"""

from __future__ import annotations

import asyncio
import shlex
import time
from typing import Any

from loom.core.events import ToolComplete, ToolExecuting
from loom.core.ids import new_call_id
from loom.core.messages import AssistantMessage, ToolCall
from loom.session.runtime.checkpointing import current_turn, records

OUTPUT_CHARS = 4_000
FILE_ARGS = ("path", "file_path")


class PostToolsCommands:
    """A post-tools hook (SessionOptions.post_tools_hooks) running shell commands."""

    def __init__(self, commands: list[str]) -> None:
        self.commands = [c for c in commands if c.strip()]

    async def __call__(self, session: Any) -> str:
        if not self.commands:
            return ""
        files = await changed_files(session)
        if not files:
            return ""  # the round changed nothing: nothing to format or check
        shell = session.active_tools.get("shell")
        if shell is None:
            return "[post-tool hooks] not run: this session has no shell tool"
        quoted = " ".join(shlex.quote(path) for path in files)
        reports = [
            await _run(session, shell, command.replace("{files}", quoted))
            for command in self.commands
        ]
        return "[post-tool hooks ran on " + ", ".join(files) + "]\n" + "\n\n".join(reports)


async def changed_files(session: Any) -> list[str]:
    """Files this round's tool calls changed: the round's first checkpoint against the
    files now, or (no checkpoints) the paths the round's writing tools were given."""
    _turn, message_id = current_turn(session.thread)
    checkpointer = session.options.checkpointer
    if checkpointer is not None:
        first = next(
            (
                r
                for r in records(session.thread)
                if r.get("kind") == "before_tool" and r.get("message_id") == message_id
            ),
            None,
        )
        if first is None:
            return []  # no tool of this round could change files
        try:
            now = await checkpointer.snapshot_now("after tools")
            changed = await asyncio.to_thread(
                checkpointer.store.changed_paths, first["commit"], now.commit
            )
        except Exception:  # no checkpoint to compare with: go by the tools' arguments
            pass
        else:
            return [path for path in changed if (session.project_root / path).exists()]
    return _written_paths(session)


def _written_paths(session: Any) -> list[str]:
    from loom.tools.base import risk_of

    last = next(
        (m for m in reversed(session.thread.messages) if isinstance(m, AssistantMessage)), None
    )
    found: list[str] = []
    for call in last.tool_calls if last is not None else []:
        tool = session.active_tools.get(call.tool_name)
        if tool is None or risk_of(tool, call.arguments_json) == "read":
            continue
        for key in FILE_ARGS:
            value = call.arguments_json.get(key)
            if isinstance(value, str) and value and (session.project_root / value).is_file():
                found.append(value)
    return list(dict.fromkeys(found))


async def _run(session: Any, shell: Any, command: str) -> str:
    from loom.session.runtime.tool_runner import run_tool
    from loom.tools.base import ToolContext

    call = ToolCall(id=new_call_id(), tool_name="shell", arguments_json={"command": command})
    denied = await session.gate.check(shell, call)
    if denied is not None:
        reason = getattr(denied, "reason", None) or "the user did not allow it"
        return f"$ {command}\n(not run: {reason})"
    session.publish(
        ToolExecuting(
            session_id=session.id, tool_name="shell", call_id=call.id, arguments=call.arguments_json
        )
    )
    ctx = ToolContext(
        project_root=session.project_root,
        session_id=session.id,
        thread_id=session.thread.id,
        progress=lambda *_: None,
        services=session.options.tool_services,
    )
    started = time.monotonic()
    result = await run_tool(shell, call.arguments_json, ctx, session.options.tool_timeout)
    session.publish(
        ToolComplete(
            session_id=session.id,
            tool_name="shell",
            call_id=call.id,
            result=result.content,
            is_error=result.is_error,
        )
    )
    output = result.content
    if len(output) > OUTPUT_CHARS:
        output = output[:OUTPUT_CHARS] + f"\n[... {len(output) - OUTPUT_CHARS} more characters]"
    took = time.monotonic() - started
    status = "failed" if result.is_error else "ok"
    return f"$ {command}  ({status}, {took:.1f} s)\n{output}"
