"""The extension hook end to end: a plugin package (tests/plugins/site, found through
its dist-info entry points) gives the agent a tool in `loom run` against the fake LLM
server, its session cleanup runs, a provider plugin answers, and broken plugins are
reported and skipped, never fatal."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.loom_cli import loom, loom_in_process
from tests.support.plugins import with_plugins


def test_a_plugin_tool_reaches_the_agent_in_loom_run(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(tool_calls=[FakeToolCall("shout", {"text": "quiet please"})]))
    server.add(Turn(text="It shouted."))
    done = loom(
        ["run", "-p", "shout it", "-o", "stream-json"], project, server, PYTHONPATH=with_plugins()
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert "shout" in lines[0]["tools"] and "file_read" in lines[0]["tools"]
    tools_offered = [t["name"] for t in server.requests[0].json["tools"]]
    assert "shout" in tools_offered and "repo_map" in tools_offered
    results = [c for line in lines if line["type"] == "user" for c in line["message"]["content"]]
    assert {"type": "tool_result", "content": "QUIET PLEASE"}.items() <= results[-1].items()
    assert lines[-1]["result"] == "It shouted."
    # the broken ones are reported on stderr and skipped
    assert "plugin broken (loom.tools, from loom-shout 0.1) skipped" in done.stderr
    assert "No module named 'loom_shout_missing'" in done.stderr
    # the plugin's on_close cleanup ran when the session stopped
    marker = next(Path(os.environ["LOOM_HOME"]).rglob("shout-closed.txt"))
    assert marker.read_text() == lines[0]["session_id"]


def test_without_the_plugin_the_tool_is_not_there(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(text="ok"))
    done = loom_in_process(["run", "-p", "hi", "-o", "stream-json"], project, server)
    assert done.returncode == 0, done.stderr
    assert "shout" not in json.loads(done.stdout.splitlines()[0])["tools"]


def test_a_provider_plugin_answers(server: FakeLlmServer, project: Path) -> None:
    done = loom(["run", "-p", "hi", "-m", "echo:any"], project, server, PYTHONPATH=with_plugins())
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "the echo provider plugin answered"
    assert server.requests == []  # the plugin, not the fake server, answered


def test_loom_plugins_lists_every_group(server: FakeLlmServer, project: Path) -> None:
    done = loom(["plugins", "--json"], project, server, PYTHONPATH=with_plugins())
    assert done.returncode == 1  # something is broken
    rows = {(r["group"], r["name"]): r for r in json.loads(done.stdout)}
    assert rows["loom.tools", "repointel"]["tools"] == ["repo_map", "symbol_search"]
    assert rows["loom.tools", "lsp"]["source"] == "loom"
    assert (
        rows["loom.tools", "shout"] | {"ok": True, "tools": ["shout"]}
        == rows["loom.tools", "shout"]
    )
    assert "this plugin has a bug" in rows["loom.tools", "broken"]["error"]
    assert rows["loom.providers", "echo"]["ok"] and rows["loom.node_types", "hypothesis"]["ok"]
    assert "names a string" in rows["loom.node_types", "misnamed"]["error"]
    text = loom(["plugins"], project, server, PYTHONPATH=with_plugins()).stdout
    assert "shout        loom-shout 0.1" in text
    assert rows["loom.extractors", "proto"]["tools"] == ["proto (.proto)"]
    assert "needs `language`" in rows["loom.extractors", "shapeless"]["error"]


def test_an_extractor_plugin_puts_its_language_in_the_repo_map(
    server: FakeLlmServer, project: Path
) -> None:
    (project / "api.proto").write_text(
        'syntax = "proto3";\n\nmessage Greeting {\n  string text = 1;\n}\n\n'
        "service Greeter {\n  rpc Greet (Greeting) returns (Greeting);\n}\n"
    )
    (project / "main.py").write_text("def greet():\n    return Greeting()\n")
    before = loom_in_process(["map", "--tokens", "2000"], project, server)
    assert before.returncode == 0, before.stderr
    assert "api.proto" not in before.stdout  # no language reads it: not in the map
    after = loom(["map", "--tokens", "2000"], project, server, PYTHONPATH=with_plugins())
    assert after.returncode == 0, after.stderr
    assert "api.proto" in after.stdout
    assert "message Greeting {" in after.stdout and "service Greeter {" in after.stdout
    # the broken extractor beside it is reported and skipped, never fatal
    assert "extractor plugin shapeless skipped" in after.stderr
    # and the agent's symbol_search finds the plugin's definitions too
    server.add(Turn(tool_calls=[FakeToolCall("symbol_search", {"query": "Greeter"})]))
    server.add(Turn(text="found"))
    done = loom(
        ["run", "-p", "find it", "-o", "stream-json"], project, server, PYTHONPATH=with_plugins()
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    results = [c for line in lines if line["type"] == "user" for c in line["message"]["content"]]
    assert "api.proto:7" in str(results[-1]["content"])
