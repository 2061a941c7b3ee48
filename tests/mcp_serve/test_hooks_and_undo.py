"""`loom mcp serve` runs tools as a session does: the person's PreToolUse and PostToolUse
hooks apply to an MCP client's calls, and an edit over MCP takes a checkpoint first, so
`loom undo` takes it back. Driven by the npm inspector CLI (a real MCP client over stdio)."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

from tests.support.config_files import user_config
from tests.support.loom_cli import loom_in_process
from tests.support.mcp import SERVE, inspect, text_of

HOOK = Path(__file__).resolve().parents[1] / "hooks" / "hook_script.py"


def _hook(event: str, log: Path, mode: str, arg: str = "", matcher: str = ".*") -> str:
    command = shlex.join([sys.executable, str(HOOK), str(log), mode, *([arg] if arg else [])])
    return f"[[hooks.{event}]]\ncommand = {json.dumps(command)}\nmatcher = {json.dumps(matcher)}\n"


def _write(proj: Path, path: str, content: str, *allow: str) -> dict:
    flags = [flag for name in allow for flag in ("--allow", name)]
    return inspect(
        [*SERVE, "-C", str(proj), *flags],
        *("--method", "tools/call", "--tool-name", "file_write"),
        *("--tool-arg", f"path={path}", f"content={content}"),
    )


def test_a_pre_tool_use_hook_that_blocks_a_call_blocks_it_over_mcp(
    proj: Path, tmp_path: Path
) -> None:
    log = tmp_path / "pre.log"
    user_config(_hook("PreToolUse", log, "block", "no writes from other agents", "file_.*"))
    refused = _write(proj, "planted.txt", "x", "file_write")  # allowed by --allow, still refused
    assert refused["isError"] is True
    assert "Refused by a PreToolUse hook: no writes from other agents" in text_of(refused)
    assert not (proj / "planted.txt").exists()
    (seen,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert seen["hook_event_name"] == "PreToolUse" and seen["tool_name"] == "file_write"
    assert seen["tool_input"] == {"path": "planted.txt", "content": "x"}
    read = inspect(  # a call the matcher leaves alone runs
        [*SERVE, "-C", str(proj)],
        *("--method", "tools/call", "--tool-name", "directory_list"),
    )
    assert read["isError"] is False and "a.txt" in text_of(read)


def test_a_pre_tool_use_hook_may_ask_and_post_tool_use_feedback_reaches_the_client(
    proj: Path, tmp_path: Path
) -> None:
    ask = json.dumps({"hookSpecificOutput": {"permissionDecision": "ask"}})
    post = json.dumps({"hookSpecificOutput": {"additionalContext": "lint: 2 warnings"}})
    user_config(
        _hook("PreToolUse", tmp_path / "pre.log", "json", ask, "file_write")
        + _hook("PostToolUse", tmp_path / "post.log", "json", post, "file_read")
    )
    # `--allow file_write` would let it run; the hook asks, and the inspector cannot answer
    asked = _write(proj, "b.txt", "x", "file_write")
    assert asked["isError"] is True and "a PreToolUse hook asks" in text_of(asked)
    assert not (proj / "b.txt").exists()
    read = inspect(
        [*SERVE, "-C", str(proj)],
        *("--method", "tools/call", "--tool-name", "file_read", "--tool-arg", "path=a.txt"),
    )
    assert "hello from a" in text_of(read)
    assert "[PostToolUse hook]\nlint: 2 warnings" in text_of(read)


def test_an_edit_over_mcp_is_undone_by_loom_undo(proj: Path) -> None:
    (proj / "notes.txt").write_text("untracked, precious\n")  # not in git: only a checkpoint
    first = _write(proj, "a.txt", "changed by another agent\n", "file_write")
    assert first["isError"] is False, text_of(first)
    second = _write(proj, "notes.txt", "overwritten\n", "file_write")
    assert second["isError"] is False, text_of(second)
    assert (proj / "notes.txt").read_text() == "overwritten\n"
    undone = loom_in_process(["undo"], proj, None)
    assert undone.returncode == 0, undone.stderr
    assert "Undid 1 turn" in undone.stdout and "M notes.txt" in undone.stdout
    assert (proj / "notes.txt").read_text() == "untracked, precious\n"
    assert (proj / "a.txt").read_text() == "changed by another agent\n"
    # each server run is a session of its own, with its own thread: the first one's edit
    threads = Path(os.environ["LOOM_HOME"]) / "data" / "threads"
    saved = [json.loads(path.read_text()) for path in threads.glob("T-*.json")]
    assert len(saved) == 2 and all(thread["is_private"] for thread in saved)
    (older,) = [t for t in saved if all(r["kind"] != "undo" for r in t["checkpoints"])]
    again = loom_in_process(["undo", "--thread", older["id"]], proj, None)
    assert again.returncode == 0, again.stderr
    assert (proj / "a.txt").read_text() == "hello from a\n"
    # the record is a thread of its own, private (never synced), listed as such
    listed = loom_in_process(["list"], proj, None)
    assert "loom mcp serve" in listed.stdout
