"""Lifecycle hooks (`[[hooks.EVENT]]`, Claude Code's contract) through `loom run` against
the fake LLM server: what each hook gets on stdin, exit 2 blocks, JSON decisions,
context for the model, and the bad hooks (a hang, megabytes of output, exit 1)."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.config_files import user_config
from tests.support.loom_cli import Done
from tests.support.wire import system_of, tool_results

SCRIPT = Path(__file__).resolve().parents[1] / "hooks" / "hook_script.py"


def hook(log: Path, mode: str, arg: str = "") -> str:
    return shlex.join([sys.executable, str(SCRIPT), str(log), mode, *([arg] if arg else [])])


def entry(
    event: str, command: str, matcher: str | None = None, timeout: float | None = None
) -> str:
    lines = [f"[[hooks.{event}]]", f"command = {json.dumps(command)}"]
    if matcher is not None:
        lines.append(f"matcher = {json.dumps(matcher)}")
    if timeout is not None:
        lines.append(f"timeout = {timeout}")
    return "\n".join(lines) + "\n"


def logged(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def write_call(path: str = "out.txt") -> Turn:
    return Turn(tool_calls=[FakeToolCall("file_write", {"path": path, "content": "hi\n"})])


def test_pre_tool_use_exit_2_refuses_the_call_and_the_model_reads_why(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "pre.log"
    user_config(entry("PreToolUse", hook(log, "block", "no writes on Fridays"), "file_.*"))
    server.add(write_call(), Turn(tool_calls=[FakeToolCall("directory_list", {})]), Turn(text="ok"))
    done = cli(["run", "-p", "write it", "--yes"], project, server)
    assert done.returncode == 0, done.stderr
    assert not (project / "out.txt").exists()
    refusal = tool_results(server.requests[1])[0]
    assert "Refused by a PreToolUse hook: no writes on Fridays" in refusal
    (seen,) = logged(log)  # directory_list does not match `file_.*`: one run only
    assert seen["hook_event_name"] == "PreToolUse" and seen["tool_name"] == "file_write"
    assert seen["tool_input"] == {"path": "out.txt", "content": "hi\n"}
    thread_id = seen["session_id"]
    assert thread_id.startswith("T-") and seen["cwd"] == str(project)
    assert seen["transcript_path"].endswith(f"{thread_id}.json") and seen["tool_use_id"]


def test_pre_tool_use_json_allow_skips_the_question_and_updated_input_is_used(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path, tmp_path: Path
) -> None:
    decision = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": {"path": "elsewhere.txt", "content": "rewritten\n"},
        }
    }
    user_config(entry("PreToolUse", hook(tmp_path / "log", "json", json.dumps(decision))))
    server.add(write_call(), Turn(text="ok"))
    done = cli(["run", "-p", "write it"], project, server)  # no --yes: the hook allowed it
    assert done.returncode == 0, done.stderr
    assert (project / "elsewhere.txt").read_text() == "rewritten\n"
    assert not (project / "out.txt").exists() and "refused" not in done.stderr


def test_pre_tool_use_allow_never_lifts_the_dangerous_floor(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path, tmp_path: Path
) -> None:
    allow = {"hookSpecificOutput": {"permissionDecision": "allow"}}
    user_config(entry("PreToolUse", hook(tmp_path / "log", "json", json.dumps(allow))))
    (project / "keep").mkdir()
    risky = {"command": 'rm -rf "$KEEP"'}
    server.add(Turn(tool_calls=[FakeToolCall("shell", risky)]), Turn(text="ok"))
    done = cli(["run", "-p", "clean"], project, server, KEEP="keep")
    assert done.returncode == 0, done.stderr
    assert (project / "keep").is_dir() and "refused shell" in done.stderr
    assert "computed when it runs" in tool_results(server.requests[1])[0]


def test_pre_tool_use_json_deny_and_ask_in_a_headless_run(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path, tmp_path: Path
) -> None:
    deny = {"hookSpecificOutput": {"permissionDecision": "deny",
                                   "permissionDecisionReason": "use file_edit"}}  # fmt: skip
    ask = {"hookSpecificOutput": {"permissionDecision": "ask"}}
    user_config(
        entry("PreToolUse", hook(tmp_path / "a", "json", json.dumps(deny)), "file_write")
        + entry("PreToolUse", hook(tmp_path / "b", "json", json.dumps(ask)), "directory_list")
    )
    server.add(write_call(), Turn(tool_calls=[FakeToolCall("directory_list", {})]), Turn(text="ok"))
    done = cli(["run", "-p", "go", "--yes"], project, server)
    assert done.returncode == 0, done.stderr
    assert "Refused by a PreToolUse hook: use file_edit" in tool_results(server.requests[1])[0]
    listing = tool_results(server.requests[2])[-1]  # read-only, yet the hook wants a person
    assert "a PreToolUse hook asks for your approval" in listing
    assert "refused directory_list" in done.stderr


def test_post_tool_use_gets_the_response_and_exit_2_feedback_reaches_the_model(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "post.log"
    user_config(entry("PostToolUse", hook(log, "block", "line 1: missing newline"), "file_write"))
    server.add(write_call(), Turn(text="fixed"))
    done = cli(["run", "-p", "write", "--yes"], project, server)
    assert done.returncode == 0, done.stderr
    assert (project / "out.txt").exists()  # it ran: PostToolUse comes after
    result = tool_results(server.requests[1])[0]
    assert "[PostToolUse hook]\nline 1: missing newline" in result
    (seen,) = logged(log)
    response = seen["tool_response"]
    assert response["is_error"] is False and "out.txt" in response["content"]


def test_user_prompt_submit_adds_context_or_blocks_the_message(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path, tmp_path: Path
) -> None:
    user_config(entry("UserPromptSubmit", hook(tmp_path / "u", "print", "Sprint ends Friday.")))
    server.add(Turn(text="noted"))
    done = cli(["run", "-p", "plan the week"], project, server)
    assert done.returncode == 0, done.stderr
    sent = json.dumps(server.requests[0].json["messages"][-1])
    assert "plan the week" in sent and "Sprint ends Friday." in sent

    user_config(entry("UserPromptSubmit", hook(tmp_path / "v", "block", "no secrets in prompts")))
    done = cli(["run", "-p", "my password is hunter2"], project, server)
    assert done.returncode == 1
    assert "UserPromptSubmit hook blocked this message: no secrets in prompts" in done.stderr
    assert len(server.requests) == 1  # the blocked message never reached the model


def test_stop_hook_exit_2_makes_the_turn_go_on_once(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "stop.log"
    user_config(entry("Stop", hook(log, "block-once", "run the tests first")))
    server.add(Turn(text="done"), Turn(text="tests pass, done"))
    done = cli(["run", "-p", "fix it"], project, server)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "tests pass, done"
    assert "run the tests first" in json.dumps(server.requests[1].json["messages"][-1])
    first, second = logged(log)
    assert first["stop_hook_active"] is False and second["stop_hook_active"] is True
    assert first["last_assistant_message"] == "done"


def test_a_stop_hook_that_always_blocks_is_capped_and_says_so(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path, tmp_path: Path
) -> None:
    from loom.session.runtime.hook_points import MAX_STOP_CONTINUATIONS

    log = tmp_path / "stop.log"
    user_config(entry("Stop", hook(log, "block", "not yet")))
    server.add(*[Turn(text=f"done {n}") for n in range(MAX_STOP_CONTINUATIONS + 1)])
    done = cli(["run", "-p", "fix it"], project, server)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"done {MAX_STOP_CONTINUATIONS}"
    assert len(logged(log)) == MAX_STOP_CONTINUATIONS
    assert f"Stop hook: it kept the turn going {MAX_STOP_CONTINUATIONS} times" in done.stderr


def test_session_start_context_reaches_the_system_prompt_and_session_end_runs(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path, tmp_path: Path
) -> None:
    end_log = tmp_path / "end.log"
    user_config(
        entry("SessionStart", hook(tmp_path / "s", "print", "Open issues: #12 login"), "startup")
        + entry("SessionEnd", hook(end_log, "ok"))
    )
    server.add(Turn(text="ok"))
    done = cli(["run", "-p", "hi"], project, server)
    assert done.returncode == 0, done.stderr
    assert "Open issues: #12 login" in system_of(server.requests[0])
    (ended,) = logged(end_log)
    assert ended["hook_event_name"] == "SessionEnd" and ended["reason"] == "exit"


@pytest.mark.parametrize(
    ("mode", "warning"),
    [
        ("hang", "did not finish in time and was stopped"),
        ("fail", "failed (exit 1: the linter crashed); going on"),
        ("flood", "printed more than 64000 bytes"),
    ],
)
def test_a_bad_hook_is_a_warning_and_the_call_goes_on(
    cli: Callable[..., Done],
    server: FakeLlmServer,
    project: Path,
    tmp_path: Path,
    mode: str,
    warning: str,
) -> None:
    user_config(entry("PreToolUse", hook(tmp_path / "log", mode), timeout=1))
    server.add(write_call(), Turn(text="ok"))
    done = cli(["run", "-p", "write", "--yes"], project, server)
    assert done.returncode == 0, done.stderr
    assert (project / "out.txt").read_text() == "hi\n"
    assert "loom: PreToolUse hook `" in done.stderr and warning in done.stderr
    assert "hook: PreToolUse hook" not in done.stderr  # the hook named once


def test_a_matcher_that_is_not_a_regex_is_a_clear_config_error(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    user_config(entry("PreToolUse", "true", "file_(write"))
    done = cli(["run", "-p", "hi"], project, server)
    assert done.returncode == 1
    assert "matcher 'file_(write' is not a regular expression" in done.stderr
    assert "config.toml" in done.stderr and not server.requests


def test_a_projects_hooks_run_only_in_a_trusted_project(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "project-hook.log"
    (project / ".loom.toml").write_text(entry("PreToolUse", hook(log, "block", "planted")))
    server.add(write_call(), Turn(text="ok"))
    done = cli(["run", "-p", "write", "--yes"], project, server)
    assert done.returncode == 0, done.stderr
    assert not log.exists() and (project / "out.txt").exists()  # a cloned repo's hook: not run
    assert "hooks.PreToolUse" in done.stderr and "loom trust" in done.stderr

    (project / "out.txt").unlink()
    server.add(write_call(), Turn(text="ok"))
    done = cli(["run", "-p", "write", "--yes", "--trust"], project, server)
    assert done.returncode == 0, done.stderr
    assert logged(log) and not (project / "out.txt").exists()  # trusted: it runs and blocks


def test_hooks_in_the_repl(server: FakeLlmServer, project: Path, tmp_path: Path) -> None:
    from tests.support.chat_pty import PROMPT, saved_thread, spawn

    user_config(
        entry("PreToolUse", hook(tmp_path / "pre", "fail"), "file_write")
        + entry("UserPromptSubmit", hook(tmp_path / "ups", "print", "Deploys are frozen."))
    )
    server.add(write_call(), Turn(text="wrote it"))
    child = spawn(["--yes"], project, server)
    child.expect(PROMPT)
    child.sendline("write out.txt")
    child.expect(r"PreToolUse hook `.*` failed \(exit 1: the linter crashed\)")
    assert child.before is not None
    assert not child.before.endswith("PreToolUse hook: ")  # the hook named once
    child.expect("wrote it")
    child.expect(PROMPT)
    child.sendeof()
    saved_thread(child)
    assert (project / "out.txt").read_text() == "hi\n"  # a failing hook warns; the call goes on
    assert "Deploys are frozen." in json.dumps(server.requests[0].json["messages"][-1])


def test_subagent_stop_keeps_a_child_going_and_a_childs_brief_is_no_user_prompt(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path, tmp_path: Path
) -> None:
    child_log, stop_log, prompt_log = tmp_path / "sub", tmp_path / "stop", tmp_path / "ups"
    user_config(
        entry("SubagentStop", hook(child_log, "block-once", "cite the file"))
        + entry("Stop", hook(stop_log, "ok"))
        + entry("UserPromptSubmit", hook(prompt_log, "ok"))
    )
    brief = "Find the config loader"
    task = FakeToolCall("task", {"description": "find it", "prompt": brief})
    server.add(Turn(tool_calls=[task]), Turn(text="found"))
    server.for_first_message(brief, Turn(text="it is somewhere"), Turn(text="config.py:1"))
    done = cli(["run", "-p", "where is the loader?"], project, server)
    assert done.returncode == 0, done.stderr
    assert tool_results(server.requests[-1])[0].startswith("config.py:1")  # it went on
    first, second = logged(child_log)
    assert first["hook_event_name"] == "SubagentStop" and second["stop_hook_active"] is True
    assert [e["hook_event_name"] for e in logged(stop_log)] == ["Stop"]  # the parent's only
    assert [e["prompt"] for e in logged(prompt_log)] == ["where is the loader?"]


def test_a_pre_tool_use_hook_guards_a_sub_agents_calls_too(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path, tmp_path: Path
) -> None:
    """Handing the work to a sub-agent is no way around the person's PreToolUse guard."""
    log = tmp_path / "pre.log"
    user_config(entry("PreToolUse", hook(log, "block", "no writes today"), "file_write"))
    brief = "Write out.txt for me"
    task = FakeToolCall("task", {"description": "write it", "prompt": brief})
    server.add(Turn(tool_calls=[task]), Turn(text="it was refused"))
    server.for_first_message(brief, write_call(), Turn(text="a hook refused it"))
    done = cli(["run", "-p", "write it", "--yes", "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr
    assert not (project / "out.txt").exists()
    (seen,) = logged(log)  # the child's call, in the child's session
    assert seen["tool_name"] == "file_write"
    assert seen["session_id"] != json.loads(done.stdout)["thread_id"]
    (refusal,) = tool_results(server.requests[-2])  # what the child's model read
    assert "Refused by a PreToolUse hook: no writes today" in refusal


def test_attached_files_and_hook_context_are_the_messages_not_the_persons_words(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path, tmp_path: Path
) -> None:
    """Issue 39 item 5: `@calc.py:1-1` and a UserPromptSubmit hook's context reach the
    model as before, but the title, `loom search` and `loom show` keep them apart from
    what the person typed."""
    from tests.support.loom_cli import loom

    (project / "calc.py").write_text("def add(a, b):  # zanzibar\n    return a + b\n")
    user_config(entry("UserPromptSubmit", hook(tmp_path / "u", "print", "Sprint ends Friday.")))
    server.add(Turn(text="It adds."))
    done = cli(["run", "-p", "look at @calc.py:1-1", "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr
    sent = json.dumps(server.requests[0].json["messages"][-1])
    assert "look at @calc.py:1-1" in sent and "zanzibar" in sent and "Sprint ends Friday." in sent
    thread_id = json.loads(done.stdout)["thread_id"]

    (row,) = json.loads(loom(["list", "--json"], project, None).stdout)
    assert row["title"] == "look at @calc.py:1-1"
    assert "No threads match" in loom(["search", "zanzibar"], project, None).stdout
    assert "No threads match" in loom(["search", "Sprint"], project, None).stdout
    assert thread_id in loom(["search", "look"], project, None).stdout

    shown = loom(["show", thread_id], project, None, COLUMNS="200").stdout
    assert "attached calc.py:1-1" in shown and "zanzibar" not in shown
    assert "added by the UserPromptSubmit hook: Sprint ends Friday." in shown
    exported = loom(["export", thread_id, "--format", "markdown"], project, None).stdout
    assert "Attached: calc.py:1-1" in exported and "zanzibar" in exported
