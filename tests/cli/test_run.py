"""`loom run` through the CLI (in process, and as a real subprocess) against the fake LLM
server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.loom_cli import lines, loom, loom_in_process, provider_env


def test_text_prints_the_answer(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(text="The answer is 42."))
    done = loom(["run", "-p", "what is it?"], project, server)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "The answer is 42.\n"
    (request,) = server.requests
    assert request.format == "anthropic" and request.json["model"] == "claude-sonnet-4-6"


def test_prompt_from_stdin_and_json_result(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(text="piped ok"))
    done = loom(["run", "--output-format", "json"], project, server, "do the thing\n")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["result"] == "piped ok" and result["subtype"] == "success"
    assert result["num_turns"] == 1 and result["usage"]["output_tokens"] > 0
    thread = json.loads(_thread_file(result["thread_id"]).read_text())
    assert [m["role"] for m in thread["conversation"]["messages"]] == ["user", "assistant"]
    assert thread["conversation"]["messages"][0]["content"] == "do the thing"


def test_model_flag_and_openai(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(text="from openai"))
    done = loom_in_process(["run", "-p", "hi", "--model", "openai:gpt-5"], project, server)
    assert done.returncode == 0, done.stderr
    assert server.requests[0].format == "responses" and server.requests[0].json["model"] == "gpt-5"


def test_root_model_option_applies_to_run(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(text="ok"))
    done = loom_in_process(["--model", "openai:gpt-5", "run", "-p", "hi"], project, server)
    assert done.returncode == 0, done.stderr
    assert server.requests[0].json["model"] == "gpt-5"


def test_project_config_picks_the_model(server: FakeLlmServer, project: Path) -> None:
    (project / ".loom.toml").write_text('[model]\ndefault = "openai:gpt-4.1"\n[typo]\nx = 1\n')
    server.add(Turn(text="ok"))
    done = loom_in_process(["run", "-p", "hi"], project, server)
    assert done.returncode == 0, done.stderr
    assert server.requests[0].json["model"] == "gpt-4.1"
    assert "unknown config key 'typo'" in done.stderr


def test_without_yes_a_write_is_refused_and_reported(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(tool_calls=[FakeToolCall("file_write", {"path": "x.txt", "content": "x"})]))
    server.add(Turn(text="I could not write it."))
    done = loom_in_process(["run", "-p", "write x", "--output-format", "json"], project, server)
    assert done.returncode == 0, done.stderr
    assert not (project / "x.txt").exists()
    assert "refused file_write" in done.stderr and "--yes" in done.stderr
    result = json.loads(done.stdout)
    (denial,) = result["permission_denials"]
    assert denial["tool_name"] == "file_write" and denial["tool_input"]["path"] == "x.txt"
    # the model was told why, in the tool result it received
    tool_result = server.requests[1].json["messages"][-1]["content"][0]
    assert "headless" in tool_result["content"] and tool_result["is_error"] is True


def test_a_refusal_beyond_yes_does_not_advise_passing_yes(
    server: FakeLlmServer, project: Path
) -> None:
    """--yes given, a write of the project's .loom.toml still asks (a protected file):
    the advice is what can be done, not "pass --yes"."""
    write = {"path": ".loom.toml", "content": "[permissions]\nauto_approve = ['shell']\n"}
    server.add(Turn(tool_calls=[FakeToolCall("file_write", write)]), Turn(text="I could not."))
    done = loom_in_process(["run", "-p", "loosen it", "--yes"], project, server)
    assert done.returncode == 0, done.stderr
    (line,) = [line for line in done.stderr.splitlines() if "refused" in line]
    assert line.startswith("loom: refused file_write .loom.toml: it needs approval")
    assert "even with --yes" in line and "pass --yes" not in line
    assert not (project / ".loom.toml").exists()


def test_a_headless_refusal_is_one_line_for_the_person_and_an_event(
    server: FakeLlmServer, project: Path
) -> None:
    call = FakeToolCall("shell", {"command": "touch made"}, id="call_9")
    server.add(Turn(tool_calls=[call]), Turn(text="I could not."))
    done = loom_in_process(["run", "-p", "make it", "-o", "stream-json"], project, server)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "loom: refused shell touch made: it needs approval and nobody can give it in a "
        "headless run; pass --yes, or list shell under [permissions] auto_approve"
    ]  # not the text meant for the model ("do not retry it, finish what you can...")
    events = lines(done.stdout)
    entry = {"tool_name": "shell", "tool_use_id": "call_9", "tool_input": {"command": "touch made"}}
    (denied,) = [e for e in events if e["type"] == "loom.permission_denial"]
    assert {k: denied[k] for k in entry} == entry
    kinds = [e["type"] for e in events]
    assert kinds.index("loom.permission_denial") > kinds.index("user", 1)  # after its result
    assert events[-1]["permission_denials"] == [entry]


def test_stream_json_orders_events_as_claude_code_does(
    server: FakeLlmServer, project: Path
) -> None:
    (project / "a.txt").write_text("hi\n")
    call = FakeToolCall("file_read", {"path": "a.txt"}, id="call_1")
    server.add(Turn(text="Reading.", tool_calls=[call]), Turn(text="Done."))
    done = loom_in_process(["run", "-p", "read a", "-o", "stream-json"], project, server)
    assert done.returncode == 0, done.stderr
    kinds = [e["type"] + ":" + e.get("status", "") for e in lines(done.stdout)]
    assert kinds == [
        "system:",
        "user:",  # the prompt
        "loom.session_status:thinking",
        "assistant:",  # the message holding the call, before the call runs
        "loom.session_status:executing_tool",
        "loom.tool_executing:",
        "loom.tool_complete:",
        "user:",  # its result
        "loom.session_status:thinking",
        "assistant:",  # the final answer, then idle and the result
        "loom.session_status:idle",
        "result:",
    ]


def test_auto_approve_from_config_allows_without_yes(server: FakeLlmServer, project: Path) -> None:
    (project / ".loom.toml").write_text('[permissions]\nauto_approve = ["file_write"]\n')
    write = FakeToolCall("file_write", {"path": "x.txt", "content": "x"})
    server.add(Turn(tool_calls=[write]), Turn(text="refused"))
    # a project's own permission
    untrusted = loom_in_process(["run", "-p", "write x"], project, server)
    assert untrusted.returncode == 0, untrusted.stderr
    assert not (project / "x.txt").exists() and "refused file_write" in untrusted.stderr
    (said,) = [line for line in untrusted.stderr.splitlines() if "not trusted" in line]
    assert "ignored permissions.auto_approve (.loom.toml)" in said and "loom trust" in said
    trusted = loom_in_process(["trust", "--yes"], project, server)
    assert trusted.returncode == 0 and "Trusted" in trusted.stdout, trusted.stderr
    server.add(Turn(tool_calls=[write]), Turn(text="written"))
    done = loom_in_process(["run", "-p", "write x"], project, server)
    assert done.returncode == 0, done.stderr
    assert (project / "x.txt").read_text() == "x" and "not trusted" not in done.stderr


def test_dangerous_command_is_refused_even_with_yes(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(tool_calls=[FakeToolCall("shell", {"command": "rm -rf /"})]))
    server.add(Turn(text="refused"))
    done = loom_in_process(["run", "-p", "wipe", "--yes"], project, server)
    assert done.returncode == 0
    assert "refused shell" in done.stderr and "dangerous" in done.stderr


@pytest.mark.parametrize("limit", [1, 2])
def test_max_turns(server: FakeLlmServer, project: Path, limit: int) -> None:
    for _ in range(4):
        server.add(Turn(tool_calls=[FakeToolCall("file_read", {"path": "notes.txt"})]))
    server.add(Turn(text="summary"))
    done = loom_in_process(
        ["run", "-p", "loop", "--max-turns", str(limit), "-o", "json"], project, server
    )
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["subtype"] == "error_max_turns" and result["is_error"] is True
    assert "--max-turns" in done.stderr
    assert len(server.requests) == limit  # "Ask the model at most N times"
    assert result["num_turns"] == limit


def test_resume_continues_the_thread(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(text="first answer"))
    first = json.loads(
        loom_in_process(["run", "-p", "first", "-o", "json"], project, server).stdout
    )
    server.add(Turn(text="second answer"))
    prefix = first["thread_id"][:12]
    done = loom_in_process(
        ["run", "--resume", prefix, "-p", "second", "-o", "json"], project, server
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["thread_id"] == first["thread_id"]
    sent = [json.dumps(m["content"]) for m in server.requests[1].json["messages"]]
    assert len(sent) == 3
    assert "first" in sent[0] and "first answer" in sent[1] and "second" in sent[2]


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--model", "claude-sonnet-4-6"], {}, "has no provider"),
        (["--model", "acme:big"], {}, "Unknown provider 'acme'"),
        (["--model", "openai:gpt-5"], {"OPENAI_API_KEY": ""}, "No API key for openai"),
        (["--resume", "T-nope"], {}, "no thread matches"),
    ],
)
def test_bad_input_is_one_clear_line(
    server: FakeLlmServer,
    project: Path,
    args: list[str],
    env: dict[str, str],
    message: str,
) -> None:
    done = loom_in_process(["run", "-p", "hi", *args], project, server, **env)
    assert done.returncode == 1
    assert message in done.stderr and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1
    assert server.requests == []


def test_bad_config_file_is_reported(server: FakeLlmServer, project: Path) -> None:
    (project / ".loom.toml").write_text("[shell]\ntimeout = 'soon'\n")
    done = loom_in_process(["run", "-p", "hi"], project, server)
    assert done.returncode == 1
    assert ".loom.toml:2" in done.stderr and "shell.timeout" in done.stderr
    assert "Traceback" not in done.stderr


def test_unreachable_endpoint(project: Path, server: FakeLlmServer) -> None:
    done = loom_in_process(
        ["run", "-p", "hi", "-o", "json"],
        project,
        server,
        ANTHROPIC_BASE_URL="http://127.0.0.1:9",
        LOOM_MAX_RETRIES="0",
    )
    assert done.returncode == 1
    assert json.loads(done.stdout)["subtype"] == "error_during_execution"
    assert "Traceback" not in done.stderr
    # the model never answered: no thread is kept, so none is offered to resume
    assert "loom resume" not in done.stderr


def test_usage_errors_exit_2(server: FakeLlmServer, project: Path) -> None:
    assert loom_in_process(["run", "-p", "hi", "-o", "xml"], project, server).returncode == 2
    assert loom_in_process(["run", "-p", "  "], project, server).returncode == 2


def _thread_file(thread_id: str) -> Path:
    return Path(os.environ["LOOM_HOME"]) / "data" / "threads" / f"{thread_id}.json"


def test_sigint_ends_the_run_with_the_thread_saved(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(text="too late", delay=30))
    environ = {
        **os.environ,
        "ANTHROPIC_API_KEY": "k",
        "ANTHROPIC_BASE_URL": server.anthropic_base_url,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "loom", "run", "-p", "slow task", "-o", "json"],
        cwd=project,
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 1
    assert "stopped by SIGINT" in err and "Traceback" not in err
    result = json.loads(out)
    assert result["subtype"] == "error_during_execution"
    thread = json.loads(_thread_file(result["thread_id"]).read_text())
    assert thread["conversation"]["messages"][0]["content"] == "slow task"


def test_resume_with_prompt_continues_headlessly(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(text="noted"))
    first = json.loads(
        loom_in_process(["run", "-p", "remember 7", "-o", "json"], project, server).stdout
    )
    server.add(Turn(text="it was 7"))
    done = loom_in_process(["resume", first["thread_id"], "-p", "what was it?"], project, server)
    assert done.returncode == 0, done.stderr
    assert f"Resuming thread: {first['thread_id']}" in done.stderr  # a header, as run -r
    assert done.stdout == "it was 7\n"
    thread = json.loads(_thread_file(first["thread_id"]).read_text())
    assert [m["content"] for m in thread["conversation"]["messages"]][-2:] == [
        "what was it?",
        "it was 7",
    ]


def test_verbose_shows_tool_activity_on_stderr(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(text="Looking.", tool_calls=[FakeToolCall("file_read", {"path": "notes.txt"})]))
    server.add(Turn(text="It says one."))
    done = loom_in_process(["run", "-p", "read notes", "--verbose"], project, server)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "It says one.\n"
    assert "● file_read notes.txt" in done.stderr and "⎿" in done.stderr
    assert "Looking." not in done.stderr


def test_garbage_from_the_provider_is_a_clear_error(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(garbage="<html>502 Bad Gateway</html>"))
    done = loom_in_process(
        ["run", "-p", "hi", "-o", "stream-json"], project, server, LOOM_MAX_RETRIES="0"
    )
    assert done.returncode == 1
    last = json.loads(done.stdout.splitlines()[-1])
    assert last["type"] == "result" and last["subtype"] == "error_during_execution"
    assert "Traceback" not in done.stderr and done.stderr.startswith("loom: ")


def test_unknown_tool_and_bad_arguments_go_back_to_the_model(
    server: FakeLlmServer, project: Path
) -> None:
    server.add(
        Turn(
            tool_calls=[
                FakeToolCall("teleport", {"to": "mars"}),
                FakeToolCall("file_read", {"path": 42}),
            ]
        )
    )
    server.add(Turn(text="Sorry, I will use the right tools."))
    done = loom_in_process(["run", "-p", "go", "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr
    results = [m for m in server.requests[1].json["messages"] if m["role"] == "user"][-1]
    errors = [block for block in results["content"] if block["type"] == "tool_result"]
    assert len(errors) == 2 and all(block["is_error"] for block in errors)
    assert "teleport" in json.dumps(errors[0]) and "path" in json.dumps(errors[1])


def test_a_reader_that_leaves_stops_the_run_quietly(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(tool_calls=[FakeToolCall("file_read", {"path": "notes.txt"})]))
    server.add(Turn(text="never read"))
    done = subprocess.run(
        f"'{sys.executable}' -m loom run -p hi -o stream-json | head -1",
        shell=True,
        cwd=project,
        env={**os.environ, **provider_env(server)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert json.loads(done.stdout)["subtype"] == "init"
    assert "stopped by a closed output pipe" in done.stderr
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr


def test_bad_model_from_config_points_at_config(server: FakeLlmServer, project: Path) -> None:
    (project / ".loom.toml").write_text('[model]\ndefault = "claude-sonnet"\n')
    done = loom_in_process(["run", "-p", "hi"], project, server)
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert "has no provider" in done.stderr and "loom config" in done.stderr


def test_json_cost_is_null_for_a_model_with_no_known_price(
    server: FakeLlmServer, project: Path
) -> None:
    server.add(Turn(text="priced"))
    done = loom_in_process(["run", "-p", "hi", "-o", "json"], project, server)
    assert json.loads(done.stdout)["total_cost_usd"] > 0  # claude-sonnet-4-6 has a price
    server.add(Turn(text="unpriced"))
    done = loom_in_process(
        ["run", "-p", "hi", "-o", "json", "-m", "openai:my-local-model"], project, server
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["result"] == "unpriced" and result["total_cost_usd"] is None
    assert result["usage"]["output_tokens"] > 0
