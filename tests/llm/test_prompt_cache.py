"""Prompt caching at the adapters and in the fake providers: Anthropic's breakpoints
(where, how many, their TTL), what a cache-served call costs, and the providers' rules
the fakes enforce (tests/fakes/prompt_cache.py)."""

from __future__ import annotations

from typing import Any

import pytest

from loom.config import ConfigError, load_config
from loom.core.messages import AssistantMessage, Message, ToolCall, ToolMessage, Usage, UserMessage
from loom.llm.base import LlmRequest, collect
from loom.llm.catalog import cost_usd, model_info
from loom.paths import LoomPaths
from tests.fakes.llm_server import FakeLlmServer, Turn
from tests.fakes.prompt_cache import PromptCaches
from tests.support.providers import provider_for

SYSTEM = "You are Loom. " + "Be careful and precise. " * 400  # past every minimum


def _rounds(count: int, calls: int = 1) -> list[Message]:
    history: list[Message] = [UserMessage(content="survey the code")]
    for n in range(count):
        batch = [ToolCall(id=f"c{n}-{k}", tool_name="file_read") for k in range(calls)]
        history.append(AssistantMessage(content="", tool_calls=batch))
        history += [
            ToolMessage(tool_call_id=c.id, tool_name="file_read", content=f"body {n} " * 300)
            for c in batch
        ]
    return history


def _controls(body: dict[str, Any]) -> list[dict[str, Any]]:
    found = [b["cache_control"] for b in body.get("system", []) if "cache_control" in b]
    for message in body["messages"]:
        found += [b["cache_control"] for b in message["content"] if "cache_control" in b]
    return found


@pytest.mark.parametrize("ttl", ["5m", "1h"])
async def test_anthropic_breakpoints_move_with_the_conversation_and_are_read_back(
    ttl: str, server: FakeLlmServer
) -> None:
    provider = provider_for("anthropic", server)
    usages: list[Usage] = []
    for count in range(1, 6):  # ten parallel calls a round: more blocks than the look-back
        server.add(Turn(text="ok"))
        request = LlmRequest(
            model="claude-sonnet-4-5",
            system=SYSTEM,
            messages=_rounds(count, calls=10),
            context="<loom-context>the map</loom-context>",
            cache_ttl=ttl,  # type: ignore[arg-type]
        )
        response = await collect(provider.stream(request))
        usages.append(response.usage)
        body = server.requests[-1].json
        marks = _controls(body)
        assert 1 < len(marks) <= 4  # the API refuses a fifth
        assert all(
            m == ({"type": "ephemeral"} | ({"ttl": "1h"} if ttl == "1h" else {})) for m in marks
        )
        last = body["messages"][-1]["content"]
        # the context block last, marked too (kept in the history, the next call reads it)
        assert last[-1] == {"type": "text", "text": "<loom-context>the map</loom-context>",
                            "cache_control": marks[-1]}  # fmt: skip
        assert "cache_control" in last[-2]  # the newest result, before the context block
    assert not usages[0].cache_read_tokens and usages[0].cache_write_tokens
    for usage in usages[1:]:  # each call reads what the one before wrote
        assert usage.cache_read_tokens and usage.cache_read_tokens > 10 * usage.input_tokens


async def test_anthropic_refuses_a_fifth_breakpoint(server: FakeLlmServer) -> None:
    import anthropic

    client = anthropic.AsyncAnthropic(api_key="k", base_url=server.anthropic_base_url)
    block = {"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}
    server.add(Turn(text="never"))
    with pytest.raises(anthropic.BadRequestError, match="maximum of 4 blocks"):
        await client.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=10,
            messages=[{"role": "user", "content": [block] * 5}],  # type: ignore[list-item]
        )
    assert server.remaining_turns == 1  # refused before any answer


def test_the_fakes_apply_each_providers_rules() -> None:
    caches = PromptCaches()
    # OpenAI: nothing under 1,024 tokens; then 1,024 and steps of 128
    short = {"messages": [{"role": "user", "content": "hi " * 100}]}
    usage, commit = caches.account("openai", short)
    commit()
    assert caches.account("openai", short)[0].read == 0
    long = {"messages": [{"role": "user", "content": "x" * 6000}], "prompt_cache_key": "T-1"}
    usage, commit = caches.account("openai", long)
    commit()
    assert usage.read == 0 and usage.total == 1507
    longer = {"messages": [*long["messages"], {"role": "user", "content": "more"}]}
    assert caches.account("openai", {**longer, "prompt_cache_key": "T-1"})[0].read == 1408
    assert caches.account("openai", {**longer, "prompt_cache_key": "T-2"})[0].read == 0
    # Anthropic: a 1h breakpoint may not follow a 5m one; a TTL is 5m or 1h
    five, hour = {"type": "ephemeral"}, {"type": "ephemeral", "ttl": "1h"}
    for marks, error in (([five, hour], "must not come after"), ([{**five, "ttl": "2h"}], "5m")):
        content = [{"type": "text", "text": "x", "cache_control": m} for m in marks]
        with pytest.raises(ValueError, match=error):
            caches.account("anthropic", {"messages": [{"role": "user", "content": content}]})


def test_cache_writes_cost_what_their_ttl_costs() -> None:
    info = model_info("anthropic", "claude-sonnet-4-5")  # $3 / Mtok in
    usage = Usage(input_tokens=0, cache_read_tokens=1_000_000, cache_write_tokens=1_000_000)
    assert cost_usd(info, usage) == pytest.approx(0.30 + 3.75)
    assert cost_usd(info, usage, cache_ttl="1h") == pytest.approx(0.30 + 6.00)


def test_cache_ttl_is_a_checked_config_key(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOOM_HOME", str(tmp_path / "home"))
    paths = LoomPaths.from_env()
    paths.user_config_file.parent.mkdir(parents=True, exist_ok=True)
    paths.user_config_file.write_text('[model]\ncache_ttl = "1h"\n')
    assert load_config(tmp_path, paths=paths).model.cache_ttl == "1h"
    paths.user_config_file.write_text('[model]\ncache_ttl = "2h"\n')
    with pytest.raises(ConfigError, match="cache_ttl"):
        load_config(tmp_path, paths=paths)
