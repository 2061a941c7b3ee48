"""Pay for each token once: every request of a `loom run` session starts with the bytes
of the one before (tools, system, the conversation so far), through each provider's
real SDK path; what changes per call (the repo map, git news) comes after it, and the
fake providers' caches (tests/fakes/prompt_cache.py) serve the rest."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from tests.fakes.llm_server import (
    FakeLlmServer,
    FakeToolCall,
    RecordedRequest,
    Turn,
    first_user_text,
)
from tests.support.git import init_repo
from tests.support.loom_cli import loom_in_process
from tests.support.wire import system_of

MODELS = {
    "anthropic": "anthropic:claude-sonnet-4-5",
    "openai": "openai:gpt-5",
    "google": "google:gemini-2.5-flash",
    "openai-compatible": "openai-compatible:qwen3-coder",
}
ARRAY = {
    "anthropic": b'"messages":[',
    "openai": b'"messages":[',  # Chat Completions (openai-compatible)
    "responses": b'"input":[',  # the Responses API (openai)
    "google": b'"contents":[',
}
# the newest wire messages that may differ in the next request: on Anthropic, the
# messages whose last blocks carried the moving cache breakpoints; elsewhere none (a
# context block stays in the history where it was sent, the same bytes)
MAY_CHANGE = {"anthropic": 3, "openai": 0, "responses": 0, "google": 0}


def message_offsets(request: RecordedRequest) -> tuple[int, list[int]]:
    """(where the messages array starts, where each of its messages starts, and last
    where the array ends) in the raw body: the body as bytes, exactly as the SDK sent it."""
    raw = request.raw.decode()
    start = raw.index(ARRAY[request.format].decode()) + len(ARRAY[request.format])
    decoder, offsets, at = json.JSONDecoder(), [], start
    while raw[at] != "]":
        offsets.append(len(raw[:at].encode()))
        _, at = decoder.raw_decode(raw, at)
        at += raw[at] == ","
    offsets.append(len(raw[:at].encode()))
    return len(raw[:start].encode()), offsets


@pytest.fixture
def survey_project(tmp_path: Path) -> Path:
    files = {
        f"mod_{n}.py": "".join(f"def job_{n}_{k}(x):\n    return x + {k}\n\n" for k in range(40))
        for n in range(4)
    }
    return init_repo(tmp_path / "proj", files, commit="modules")


def _session(server: FakeLlmServer, project: Path, name: str) -> list[RecordedRequest]:
    server.add(
        Turn(tool_calls=[FakeToolCall("file_read", {"path": "mod_0.py"})]),
        Turn(tool_calls=[FakeToolCall("file_write", {"path": "new.py", "content": "x = 1\n"})]),
        Turn(tool_calls=[FakeToolCall("file_read", {"path": "mod_1.py"})]),
        Turn(tool_calls=[FakeToolCall("file_read", {"path": "mod_2.py"})]),
        Turn(text="The modules add numbers."),
    )
    done = loom_in_process(
        ["run", "-p", "Survey job_1_3 in this project", "--yes", "-o", "json", "-m", MODELS[name]],
        project,
        server,
        LOOM_MAP_TOKENS="300",
        GEMINI_API_KEY="test-key",
        GOOGLE_GEMINI_BASE_URL=server.google_base_url,
        OPENAI_COMPATIBLE_BASE_URL=server.openai_base_url,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    server.result = json.loads(done.stdout)  # type: ignore[attr-defined]
    return server.requests


@pytest.mark.parametrize("name", list(MODELS))
def test_each_request_starts_with_the_bytes_of_the_one_before(
    name: str, server: FakeLlmServer, survey_project: Path
) -> None:
    requests = _session(server, survey_project, name)
    assert len(requests) == 5
    head, _ = message_offsets(requests[0])
    for before, after in pairwise(requests):
        # tools and system: the same bytes on every call
        assert after.raw[:head] == requests[0].raw[:head]
        # the conversation: everything before the newest messages, byte for byte
        _, offsets = message_offsets(before)
        may_change = MAY_CHANGE[before.format] + 1  # the array's end is the last offset
        kept = offsets[-may_change] if len(offsets) > may_change else offsets[0]
        assert after.raw.startswith(before.raw[:kept]), name
        if len(offsets) > may_change:
            assert kept > head  # the history is there, not just the head
    assert len(message_offsets(requests[-1])[1]) > 7


def _texts(request: RecordedRequest) -> list[str]:
    """Every text of the request's conversation, in order."""
    body = request.json
    if request.format == "google":
        return [p["text"] for c in body["contents"] for p in c["parts"] if "text" in p]
    found = []
    for item in body["input" if request.format == "responses" else "messages"]:
        content = item.get("content")
        if isinstance(content, str):
            found.append(content)
        elif isinstance(content, list):
            found += [b["text"] for b in content if isinstance(b, dict) and "text" in b]
    return found


def _blocks(request: RecordedRequest) -> list[str]:
    """The context blocks the model reads in a request, oldest first."""
    return [text for text in _texts(request) if text.startswith("<loom-context>")]


@pytest.mark.parametrize("name", ["anthropic", "openai", "google"])
def test_the_model_sees_what_changes_after_the_conversation(
    name: str, server: FakeLlmServer, survey_project: Path
) -> None:
    requests = _session(server, survey_project, name)
    body = requests[0].json
    first = body.get("system") or body.get("systemInstruction") or body.get("instructions")
    system = json.dumps(first or body["messages"][0])
    assert "clean working tree" in system  # the snapshot of the session's start
    assert "# Repository map" not in system
    for before, request in pairwise(requests):
        # every call sees a map; a block once sent stays in the history as it was
        blocks = _blocks(request)
        assert any("# Repository map" in block for block in blocks)
        assert blocks[: len(_blocks(before))] == _blocks(before)
    assert "# Repository map" in _blocks(requests[0])[-1]
    # the file written by the second call: the calls after it hear of it (once, and it
    # stays in the history), the system text stays as it was
    assert not any("Since the session started" in b for b in _blocks(requests[1]))
    news = _blocks(requests[2])[-1]
    assert "Since the session started" in news and "new.py" in news
    assert sum("Since the session started" in b for b in _blocks(requests[-1])) == 1
    assert system in json.dumps(requests[-1].json)


@pytest.mark.parametrize("name", ["anthropic", "openai", "google"])
def test_the_fake_caches_serve_the_prefix_and_loom_reports_it(
    name: str, server: FakeLlmServer, survey_project: Path
) -> None:
    _session(server, survey_project, name)
    usage: dict[str, Any] = server.result["usage"]  # type: ignore[attr-defined]
    assert usage["cache_read_input_tokens"] > 0
    total = (
        usage["input_tokens"]
        + usage["cache_read_input_tokens"]
        + usage["cache_creation_input_tokens"]
    )
    assert usage["cache_read_input_tokens"] / total > 0.5
    if name == "anthropic":
        assert usage["cache_creation_input_tokens"] > 0
    # `loom show` says what the cache did for the thread
    shown = loom_in_process(["show", server.result["thread_id"]], survey_project, server)  # type: ignore[attr-defined]
    share = round(usage["cache_read_input_tokens"] / total * 100)
    assert f"(cache {share}%: {usage['cache_read_input_tokens']:,} read" in shown.stdout


def test_max_budget_usd_ends_the_run_once_spent_past_it(
    server: FakeLlmServer, survey_project: Path
) -> None:
    reads = [
        Turn(tool_calls=[FakeToolCall("file_read", {"path": f"mod_{n}.py"})]) for n in range(4)
    ]
    server.add(*reads, Turn(text="done"))
    args = ["run", "-p", "Survey it", "-o", "json", "-m", MODELS["anthropic"]]
    done = loom_in_process([*args, "--max-budget-usd", "0.02"], survey_project, server)
    assert done.returncode == 1, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["subtype"] == "error_max_budget_usd" and result["is_error"] is True
    assert result["total_cost_usd"] > 0.02
    assert "--max-budget-usd 0.02" in done.stderr and "--resume" in done.stderr
    # the call that passed it is the last one made: the rest of the script is unused
    assert 1 <= len(server.requests) < 5 and server.remaining_turns > 0


def test_a_bad_budget_is_refused_plainly(server: FakeLlmServer, survey_project: Path) -> None:
    done = loom_in_process(["run", "-p", "x", "--max-budget-usd", "lots"], survey_project, server)
    assert done.returncode == 2 and "Invalid value for '--max-budget-usd'" in done.stderr
    assert not server.requests


@pytest.mark.parametrize("name", ["anthropic", "openai", "google"])
def test_a_general_sub_agent_starts_from_its_parents_cached_prefix(
    name: str, server: FakeLlmServer, survey_project: Path
) -> None:
    brief = "Read mod_1.py and say what it adds"
    task = FakeToolCall("task", {"description": "read it", "prompt": brief})
    server.add(
        Turn(tool_calls=[FakeToolCall("file_read", {"path": "mod_0.py"})]),
        Turn(tool_calls=[task]),
        Turn(text="It adds numbers."),
    )
    read = FakeToolCall("file_read", {"path": "mod_1.py"})
    server.for_first_message(brief, Turn(tool_calls=[read]), Turn(text="mod_1 adds k."))
    done = loom_in_process(
        ["run", "-p", "Survey it", "--yes", "-o", "json", "-m", MODELS[name]],
        survey_project,
        server,
        LOOM_MAP_TOKENS="300",
        GEMINI_API_KEY="test-key",
        GOOGLE_GEMINI_BASE_URL=server.google_base_url,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    requests = server.requests
    child = [r for r in requests if brief in first_user_text(r.format, r.json)]
    parent = [r for r in requests if r not in child]
    assert len(child) == 2 and len(parent) == 3
    # the same tools and system text as its parent, byte for byte: the brief (and that
    # it cannot delegate further) comes in its first context block instead
    head, _ = message_offsets(parent[0])
    assert child[0].raw[:head] == parent[0].raw[:head]
    blocks = _blocks(child[0])
    assert "# You are a sub-agent" in blocks[-1] and "cannot start sub-agents" in blocks[-1]
    assert "# You are a sub-agent" not in system_of(child[0])
    # so the parent's cache serves the child's first call
    assert child[0].billed is not None and child[0].billed[0].read > 0
