"""Reasoning through `loom run` against the fake server, which refuses what the real APIs
refuse: --effort reaches each provider in its own words, the reasoning is kept in the
thread and sent back as each provider asks, every output shows it, `loom show` marks it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.llm_reasoning import CODEX_404
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.loom_cli import lines, loom_in_process

THOUGHT = "Check the notes file before answering."


def _tool_round(server: FakeLlmServer) -> None:
    server.add(
        Turn(
            thinking=THOUGHT,
            text="Reading.",
            tool_calls=[FakeToolCall("file_read", {"path": "notes.txt"})],
        ),
        Turn(thinking="It says one.", text="It says one."),
    )


def _thread(thread_id: str) -> dict:
    from loom.paths import LoomPaths

    path = LoomPaths.from_env().data / "threads" / f"{thread_id}.json"
    return json.loads(path.read_text())


def test_openai_reasoning_round_trips_and_streams_as_thinking_blocks(
    server: FakeLlmServer, project: Path
) -> None:
    (project / "notes.txt").write_text("one\n")
    _tool_round(server)
    args = [
        "run",
        "-p",
        "what do the notes say?",
        "-m",
        "openai:gpt-5",
        "--effort",
        "high",
        "-o",
        "stream-json",
        "--include-partial-messages",
        "--yes",
    ]
    done = loom_in_process(args, project, server)
    assert done.returncode == 0, done.stderr
    out = lines(done.stdout)
    deltas = [o["event"]["delta"] for o in out if o["type"] == "stream_event"]
    assert "".join(d["thinking"] for d in deltas if d["type"] == "thinking_delta") == (
        THOUGHT + "It says one."
    )
    first = next(o for o in out if o["type"] == "assistant")["message"]
    assert [b["type"] for b in first["content"]] == ["thinking", "text", "tool_use"]
    assert first["content"][0]["thinking"] == THOUGHT
    assert first["usage"]["reasoning_tokens"] > 0
    # the second call carried the encrypted reasoning back, before the answer and its call
    second = server.requests[-1].json
    kinds = [item.get("type") or item["role"] for item in second["input"]]
    assert kinds[:4] == ["user", "reasoning", "message", "function_call"]
    assert [r.json["reasoning"]["effort"] for r in server.requests] == ["high", "high"]
    thread_id = out[-1]["thread_id"]
    assert second["prompt_cache_key"] == thread_id
    [part] = _thread(thread_id)["conversation"]["messages"][1]["reasoning"]
    assert part["kind"] == "reasoning" and part["text"] == THOUGHT and part["data"]
    shown = loom_in_process(["show", thread_id], project, None)
    assert "✻ thinking: Check the notes file" in shown.stdout
    assert part["data"] not in shown.stdout  # opaque: kept, never shown


def test_claude_thinking_comes_back_signed_on_the_tool_round(
    server: FakeLlmServer, project: Path
) -> None:
    (project / "notes.txt").write_text("one\n")
    _tool_round(server)
    args = [
        "run",
        "-p",
        "notes?",
        "-m",
        "anthropic:claude-sonnet-4-5",
        "--effort",
        "low",
        "-o",
        "json",
        "--yes",
    ]
    done = loom_in_process(args, project, server)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "It says one."
    assistant = server.requests[-1].json["messages"][1]["content"]
    assert [b["type"] for b in assistant] == ["thinking", "text", "tool_use"]
    assert server.requests[-1].json["thinking"]["type"] == "enabled"


def test_a_codex_model_works_and_chat_completions_says_what_to_set(
    server: FakeLlmServer, project: Path
) -> None:
    server.add(Turn(text="codex here"))
    done = loom_in_process(["run", "-p", "hi", "-m", "openai:gpt-5-codex"], project, server)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "codex here\n" and server.requests[-1].path == "/v1/responses"
    from loom.paths import LoomPaths

    config = LoomPaths.from_env().user_config_file
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[providers.openai]\napi = "chat"\n')
    done = loom_in_process(["run", "-p", "hi", "-m", "openai:gpt-5.9-codex"], project, server)
    assert done.returncode != 0  # a codex model the catalog does not know: the API's 404
    assert CODEX_404 in done.stderr
    assert 'set api = "responses" under [providers.openai]' in done.stderr
    asked = len(server.requests)
    done = loom_in_process(["run", "-p", "hi", "-m", "openai:gpt-5-codex"], project, server)
    assert done.returncode != 0 and "served only by the Responses API" in done.stderr
    assert len(server.requests) == asked  # known to need it: not sent


def test_effort_on_a_model_that_does_not_reason_is_ignored_with_one_line(
    server: FakeLlmServer, project: Path
) -> None:
    server.add(Turn(text="plain"))
    args = ["run", "-p", "hi", "-m", "openai:gpt-4.1", "--effort", "high"]
    done = loom_in_process(args, project, server)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "plain\n"
    assert done.stderr.count("does not reason; effort high is ignored") == 1
    assert "reasoning" not in server.requests[-1].json


def test_model_effort_in_config_is_read_and_checked(server: FakeLlmServer, project: Path) -> None:
    (project / ".loom.toml").write_text('[model]\neffort = "minimal"\n')
    server.add(Turn(text="ok"))
    done = loom_in_process(["run", "-p", "hi", "-m", "openai:gpt-5"], project, server)
    assert done.returncode == 0, done.stderr
    assert server.requests[-1].json["reasoning"]["effort"] == "minimal"
    (project / ".loom.toml").write_text('[model]\neffort = "extreme"\n')
    done = loom_in_process(["run", "-p", "hi", "-m", "openai:gpt-5"], project, server)
    assert "effort" in done.stderr and "minimal" in done.stderr


def test_a_bad_effort_flag_names_the_allowed_values(project: Path) -> None:
    done = loom_in_process(["run", "-p", "hi", "--effort", "max"], project, None)
    assert done.returncode == 2
    assert "minimal, low, medium, high" in done.stderr


def test_sub_agents_think_at_their_agent_files_effort_or_their_parents(
    server: FakeLlmServer, project: Path
) -> None:
    agents = project / ".loom" / "agents"
    agents.mkdir(parents=True)
    (agents / "quick.md").write_text(
        "---\nname: quick\ndescription: Looks fast\neffort: minimal\n---\nBe brief.\n"
    )
    (agents / "bad.md").write_text("---\nname: bad\ndescription: d\neffort: max\n---\nb\n")
    task = {"description": "look", "prompt": "Look at a.py quickly", "agent": "quick"}
    general = {"description": "look", "prompt": "Look at b.py"}
    server.add(
        Turn(thinking="Delegate.", tool_calls=[FakeToolCall("task", task)]),
        Turn(tool_calls=[FakeToolCall("task", general)]),
        Turn(text="Both looked."),
    )
    server.for_first_message("Look at a.py quickly", Turn(thinking="Fast.", text="fine"))
    server.for_first_message("Look at b.py", Turn(text="fine too"))
    args = ["run", "-p", "look", "-m", "openai:gpt-5", "--effort", "high", "--yes"]
    done = loom_in_process(args, project, server)
    assert done.returncode == 0, done.stderr
    efforts = {r.json["input"][0]["content"]: r.json["reasoning"]["effort"]
               for r in server.requests}  # fmt: skip
    assert efforts["look"] == "high"
    assert efforts["Look at a.py quickly"] == "minimal"  # the agent file's
    assert efforts["Look at b.py"] == "high"  # the parent's
    assert "bad.md" in done.stderr and "effort must be one of" in done.stderr


def test_architect_mode_thinks_on_both_models(server: FakeLlmServer, project: Path) -> None:
    """The strong model plans with adaptive thinking, the fast one carries the step out
    with a thinking budget: its tool round sends its own signed thinking back (the fake
    refuses it otherwise), never the planner's."""
    step = {"file": "a.py", "action": "create", "description": "create a.py"}
    plan = json.dumps({"summary": "Add a module", "steps": [step]})
    server.add(Turn(thinking="Plan it.", text=f"```json\n{plan}\n```"))
    write = FakeToolCall("file_write", {"path": "a.py", "content": "A = 1\n"})
    server.add(Turn(thinking="Write it.", tool_calls=[write]), Turn(text="Created a.py."))
    args = ["run", "--architect", "--yes", "--effort", "low", "-p", "add module a"]
    done = loom_in_process(args, project, server)
    assert done.returncode == 0, done.stderr
    assert (project / "a.py").read_text() == "A = 1\n"
    planner, first, after = (r.json for r in server.requests)
    assert planner["model"] == "claude-opus-4-6" and planner["thinking"] == {"type": "adaptive"}
    assert first["thinking"]["type"] == after["thinking"]["type"] == "enabled"
    blocks = [b["type"] for m in after["messages"] if m["role"] == "assistant"
              for b in m["content"]]  # fmt: skip
    assert blocks.count("thinking") == 1 and blocks[-2:] == ["thinking", "tool_use"]


def test_resume_takes_effort_and_sends_the_threads_reasoning_back(
    server: FakeLlmServer, project: Path
) -> None:
    server.add(Turn(thinking="First thoughts.", text="First."), Turn(text="Second."))
    args = ["run", "-p", "one", "-m", "openai:gpt-5", "-o", "json"]
    first = loom_in_process(args, project, server)
    assert first.returncode == 0, first.stderr
    thread_id = json.loads(first.stdout)["thread_id"]
    again = ["resume", thread_id, "-p", "two", "--effort", "low"]
    done = loom_in_process(again, project, server)
    assert done.returncode == 0, done.stderr
    sent = server.requests[-1].json
    assert sent["reasoning"]["effort"] == "low"
    kinds = [item.get("type") or item["role"] for item in sent["input"]]
    assert kinds == ["user", "reasoning", "message", "user"]  # kept, sent back in order
