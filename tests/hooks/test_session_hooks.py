"""Lifecycle hooks a headless run never reaches, through the Workspace (the one path every
face takes): Notification while a permission question is open, PreCompact on /compact,
and the outcome rules read from exit codes and JSON."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from loom.config import load_config
from loom.hooks import HookRun, interpret
from loom.llm.base import LlmRequest
from loom.llm.scripted import ScriptedProvider, tool_turn
from loom.session import SessionSpec, Workspace
from loom.session.runtime.compaction import SUMMARY_SYSTEM, compact_now
from tests.support.config_files import user_config

SCRIPT = Path(__file__).resolve().parent / "hook_script.py"


def hook_entry(event: str, log: Path) -> str:
    command = shlex.join([sys.executable, str(SCRIPT), str(log), "ok"])
    return f"[[hooks.{event}]]\ncommand = {json.dumps(command)}\n"


def logged(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


async def test_notification_fires_while_a_permission_question_waits(
    project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "notify.log"
    user_config(hook_entry("Notification", log))
    provider = ScriptedProvider([tool_turn("file_write", {"path": "a.txt", "content": "x"}), "ok"])
    ws = Workspace(load_config(project), provider_factory=lambda model: provider)
    try:
        session = await ws.start_session(SessionSpec(cwd=project))
        asked = asyncio.Event()
        session.subscribe(lambda e: asked.set() if e.type == "permission_request" else None)
        turn = asyncio.create_task(session.send_message("write a.txt"))
        await asyncio.wait_for(asked.wait(), 20)
        for _ in range(200):  # fired beside the question, not before it
            if logged(log):
                break
            await asyncio.sleep(0.05)
        session.respond_to_permission("allow_once")
        assert await asyncio.wait_for(turn, 20) == "ok"
    finally:
        await ws.shutdown()
    (seen,) = logged(log)
    assert seen["hook_event_name"] == "Notification"
    assert seen["message"] == "Loom needs your permission to use file_write"


async def test_pre_compact_fires_with_the_trigger_and_the_focus(
    project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "compact.log"
    user_config(hook_entry("PreCompact", log))

    def answer(request: LlmRequest) -> str:
        return "SUMMARY of the early turns" if request.system == SUMMARY_SYSTEM else "fine"

    provider = ScriptedProvider([answer] * 10)
    ws = Workspace(load_config(project), provider_factory=lambda model: provider)
    try:
        session = await ws.start_session(SessionSpec(cwd=project))
        await session.send_message("first question")
        await session.send_message("second question")
        assert await compact_now(session, "keep the API names") is not None
    finally:
        await ws.shutdown()
    (seen,) = logged(log)
    assert seen["trigger"] == "manual" and seen["custom_instructions"] == "keep the API names"


def run(code: int | None, out: str = "", err: str = "", **extra: Any) -> HookRun:
    return HookRun("check", code, out, err, **extra)


def test_outcome_rules() -> None:
    # the older PreToolUse spelling, and the strictest of several answers wins
    older = interpret("PreToolUse", [run(0, '{"decision": "approve"}')])
    assert older.decision == "allow" and not older.blocked
    both = interpret("PreToolUse", [run(0, '{"decision": "approve"}'), run(2, err="no")])
    assert both.decision == "deny" and both.blocked and both.reason == "no"
    # continue: false carries its stopReason; systemMessage is for the person
    stop = interpret("PostToolUse", [run(0, '{"continue": false, "stopReason": "enough",'
                                           ' "systemMessage": "linted"}')])  # fmt: skip
    assert stop.stop == "enough" and stop.notices == ["linted"]
    # plain stdout is context only where Claude Code says so; exit 2 elsewhere is a notice
    assert interpret("PostToolUse", [run(0, "plain")]).context == []
    assert interpret("SessionStart", [run(0, "plain")]).context == ["plain"]
    start = interpret("SessionStart", [run(2, err="oops")])
    assert not start.blocked and start.notices == ["SessionStart hook `check`: oops"]
    # a Stop hook's JSON block; an undecodable or non-object stdout is no decision
    assert interpret("Stop", [run(0, '{"decision": "block", "reason": "tests"}')]).reason == "tests"
    assert not interpret("Stop", [run(0, "{not json")]).blocked
    assert not interpret("Stop", [run(0, "[1, 2]")]).blocked
