"""`Session.context_view`: where the window goes, from the pieces the next request is
built from (checked against the request the scripted provider then receives)."""

from __future__ import annotations

from pathlib import Path

from loom.llm.scripted import ScriptedProvider
from loom.llm.tokens import estimate_tokens, estimate_tool_specs_tokens
from loom.session.runtime.context_view import ContextPart, ContextView, suggestion_for
from tests.support.sessions import EchoTool, NoopTool, make_workspace, only

MAP = "src/auth.py:\n  def login(user, password)\n  class Session\n" * 20


def _parts(view: ContextView) -> dict[str, int]:
    return {part.key: part.tokens for part in view.parts}


async def test_the_view_adds_up_and_matches_the_request_sent(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Always run the tests with pytest -q.\n" * 5)
    provider = ScriptedProvider(["first answer " * 50, "second"])
    ws = make_workspace(
        tmp_path, provider, repo_map=lambda *_: MAP, repo_map_tokens=400,
        max_context_tokens=20_000, reserved_output_tokens=2_000,
    )  # fmt: skip
    session = await ws.start_session(only(EchoTool(), NoopTool()))
    before = await session.context_view()
    parts = _parts(before)
    assert before.window == 20_000 and sum(parts.values()) == 20_000
    assert list(parts)[-1] == "free" and parts["reserved"] == 2_000
    assert parts["instructions"] > 0 and parts["repo_map"] > 0 and parts["messages"] == 0
    await session.send_message("hello " * 40)
    sent = provider.requests[0]
    # the same counter over what was sent: system text (instructions inside), tools
    assert parts["system"] + parts["instructions"] == estimate_tokens(sent.system)
    assert parts["tools"] == estimate_tool_specs_tokens(tuple(sent.tools))
    after = _parts(await session.context_view())
    assert after["messages"] > 40  # the question and the answer now count
    assert after["free"] < parts["free"]
    assert after["system"] == parts["system"] and after["tools"] == parts["tools"]
    assert len(provider.requests) == 1  # looking called no model
    await ws.shutdown()


async def test_a_large_repo_map_gets_the_one_suggestion(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path, ScriptedProvider([]), repo_map=lambda *_: MAP * 10, repo_map_tokens=3_000,
        max_context_tokens=8_000, reserved_output_tokens=500,
    )  # fmt: skip
    session = await ws.start_session(only(EchoTool()))
    view = await session.context_view()
    assert view.suggestion is not None
    assert view.suggestion.startswith("the repo map is ")
    assert "lower [repo] map_tokens" in view.suggestion
    assert view.to_dict()["parts"][-1]["key"] == "free"
    await ws.shutdown()


def test_mcp_tools_are_counted_per_server_and_suggested_by_name() -> None:
    parts = (
        ContextPart("system", "system prompt", 100),
        ContextPart("tools", "tools (Loom's)", 200),
        ContextPart("tools:mcp:github", "tools (MCP server github)", 4_000),
        ContextPart("free", "free", 5_700),
    )
    view = ContextView("x:y", 10_000, parts, None)
    said = suggestion_for(view)
    assert said is not None and said.startswith("the tools (MCP server github) are 40%")
    assert "[mcp.servers.github]" in said
    small = ContextView("x:y", 10_000, (*parts[:2], ContextPart("free", "free", 9_700)), None)
    assert suggestion_for(small) is None


def test_tools_are_grouped_by_mcp_server() -> None:
    from loom.llm.base import ToolSpec
    from loom.session.runtime.context_view import tool_groups

    def spec(name: str) -> ToolSpec:
        return ToolSpec(name=name, description="d", parameters={"type": "object"})

    names = ["shell", "mcp__github__issues", "file_read", "mcp__db__query", "mcp__github__prs"]
    groups = {key: [s.name for s in found] for key, _label, found in tool_groups(
        [spec(n) for n in names])}  # fmt: skip
    assert groups == {
        "tools": ["shell", "file_read"],
        "tools:mcp:db": ["mcp__db__query"],
        "tools:mcp:github": ["mcp__github__issues", "mcp__github__prs"],
    }
