"""The model-quirks battery: what real models (and local servers) send, through `loom run`
and the real SDKs against the fake LLM server. Each quirk is handled or answered with a
clear tool error; none crashes the turn."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.loom_cli import Done, lines
from tests.support.threads import thread_file
from tests.support.wire import tool_results

MODELS = ["anthropic:claude-sonnet-4-6", "openai:gpt-5"]


def run(cli: Callable[..., Done], server: FakeLlmServer, project: Path, model: str,
        *calls: FakeToolCall, **env: str) -> tuple[Done, list[str]]:  # fmt: skip
    """One answer with `calls`, then a closing text; the results the model got."""
    server.add(Turn(tool_calls=list(calls)))
    server.add(Turn(text="finished"))
    done = cli(["run", "-p", "go", "--yes", "-o", "stream-json", "--model", model],
               project, server, **env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert lines(done.stdout)[-1]["result"] == "finished"
    return done, tool_results(server.requests[-1])


@pytest.mark.parametrize("model", MODELS)
def test_arguments_with_trailing_garbage_or_encoded_twice(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path, model: str
) -> None:
    if model.startswith("anthropic"):  # its wire carries objects: only the second applies
        calls = [FakeToolCall("file_read", json.dumps(json.dumps({"path": "notes.txt"})))]
    else:
        calls = [
            FakeToolCall("file_read", '{"path": "notes.txt"}}'),
            FakeToolCall("file_read", '{"path": "notes.txt"} trailing words'),
            FakeToolCall("file_read", json.dumps(json.dumps({"path": "notes.txt"}))),
        ]
    _, results = run(cli, server, project, model, *calls)
    assert len(results) == len(calls)
    assert all("1\tone" in r for r in results), results


@pytest.mark.parametrize("model", MODELS)
def test_unknown_tool_and_missing_arguments_are_tool_errors(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path, model: str
) -> None:
    _, results = run(cli, server, project, model,
                     FakeToolCall("read_file", {"path": "notes.txt"}),
                     FakeToolCall("file_edit", {"path": "notes.txt"}),
                     FakeToolCall("file_read", "not json at all"))  # fmt: skip
    assert "There is no tool named 'read_file'" in results[0] and "file_read" in results[0]
    assert "missing required argument(s): old_string, new_string" in results[1]
    if model.startswith("openai"):
        assert "were not a JSON object" in results[2]


def test_empty_call_ids_are_paired_exactly(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    done, results = run(cli, server, project, "openai:gpt-5",
                        FakeToolCall("file_read", {"path": "notes.txt"}, id=""),
                        FakeToolCall("directory_list", {"path": "."}, id=""))  # fmt: skip
    sent = server.requests[-1].json["input"]  # the Responses API's items
    ids = [item["call_id"] for item in sent if item.get("type") == "function_call"]
    answered = [item["call_id"] for item in sent if item.get("type") == "function_call_output"]
    assert len(set(ids)) == 2 and all(ids) and answered == ids
    assert "1\tone" in results[0] and "notes.txt" in results[1]
    thread = thread_file(lines(done.stdout)[-1]["thread_id"])
    messages = thread["conversation"]["messages"]
    assert [m["tool_call_id"] for m in messages if m["role"] == "tool"] == ids


def test_a_huge_single_line_is_cut_not_sent_whole(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    (project / "bundle.min.js").write_text("var a=1;" * 250_000)  # 2 MB, one line
    _, results = run(cli, server, project, MODELS[0],
                     FakeToolCall("file_read", {"path": "bundle.min.js"}),
                     FakeToolCall("content_search", {"pattern": "var a=1"}))  # fmt: skip
    assert "line cut, 2,000,000 chars" in results[0] and len(results[0]) < 10_000
    assert len(results[1]) < 50_000


def test_crlf_file_is_read_and_edited_keeping_its_line_ends(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    (project / "win.txt").write_bytes(b"alpha\r\nbeta\r\ngamma\r\n")
    _, results = run(cli, server, project, MODELS[0],
                     FakeToolCall("file_read", {"path": "win.txt"}),
                     FakeToolCall("file_edit", {"path": "win.txt", "old_string": "alpha\nbeta",
                                                "new_string": "alpha\nBETA"}))  # fmt: skip
    assert "2\tbeta" in results[0] and "\r" not in results[0]
    assert results[1].startswith("Edited win.txt")
    assert (project / "win.txt").read_bytes() == b"alpha\r\nBETA\r\ngamma\r\n"


def test_edit_differing_only_in_indentation_gets_the_exact_text(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    (project / "m.py").write_text("def f():\n    if x:\n        return 1\n")
    _, results = run(cli, server, project, MODELS[1],
                     FakeToolCall("file_edit", {"path": "m.py",
                                                "old_string": "if x:\n    return 1",
                                                "new_string": "if x:\n    return 2"}))  # fmt: skip
    assert "differ only in whitespace or indentation" in results[0]
    assert "2\t    if x:" in results[0]
    assert (project / "m.py").read_text().endswith("return 1\n")


def test_tool_call_text_is_parsed_only_when_opted_in(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path, loom_home: Path
) -> None:
    env = {"OPENAI_COMPATIBLE_BASE_URL": server.openai_base_url, "OPENAI_COMPATIBLE_API_KEY": "k"}
    block = ('Let me look.\n<tool_call>\n{"name": "file_read", "arguments": '
             '{"path": "notes.txt"}}\n</tool_call>')  # fmt: skip
    args = ["run", "-p", "go", "-o", "json", "--model", "openai-compatible:qwen2.5-coder"]
    server.add(Turn(text=block))
    done = cli(args, project, server, **env)
    assert json.loads(done.stdout)["result"] == block  # off: the text is just text
    (loom_home / "config").mkdir(exist_ok=True)
    (loom_home / "config" / "config.toml").write_text(
        "[providers.openai-compatible]\ntext_tool_calls = true\n"
    )
    server.add(Turn(text=block))
    server.add(Turn(text="It says one."))
    done = cli(args, project, server, **env)
    assert json.loads(done.stdout)["result"] == "It says one.", done.stderr
    system = server.requests[-2].json["messages"][0]["content"]
    assert "<tool_call>" in system  # the format is explained to the model
    assert "1\tone" in tool_results(server.requests[-1])[0]
    thread = thread_file(json.loads(done.stdout)["thread_id"])
    assistant = thread["conversation"]["messages"][1]
    assert assistant["content"] == "Let me look." and assistant["tool_calls"][0]["tool_name"] == (
        "file_read"
    )
